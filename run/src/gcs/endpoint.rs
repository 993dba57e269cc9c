//! Where ground stations are: `udp:HOST:PORT` sends to a ground station
//! listening there (QGroundControl listens on 14550, MAVSDK's examples on
//! 14540) and hears its answers on the same socket; `listen:HOST:PORT`
//! waits for ground stations to send first and answers the last one heard.

use std::net::{SocketAddr, ToSocketAddrs, UdpSocket};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// Send to a ground station at this address.
    To(SocketAddr),
    /// Listen here; answer whoever sent last.
    Listen(SocketAddr),
}

impl Endpoint {
    /// `udp:HOST:PORT`, `listen:HOST:PORT`, or `HOST:PORT` (as `udp:`).
    pub fn parse(text: &str) -> Result<Endpoint, String> {
        let (kind, addr) = match text.split_once(':') {
            Some(("udp", rest)) => ("udp", rest),
            Some(("listen", rest)) => ("listen", rest),
            _ => ("udp", text),
        };
        // An IPv4 address first when the name has one (`localhost` may
        // resolve to ::1 first; QGroundControl listens on IPv4).
        let resolved = addr
            .to_socket_addrs()
            .ok()
            .and_then(|a| {
                let all: Vec<SocketAddr> = a.collect();
                all.iter().find(|a| a.is_ipv4()).or(all.first()).copied()
            })
            .ok_or_else(|| {
                format!(
                    "{text:?} is not an endpoint: udp:HOST:PORT (send to a ground station) or \
                     listen:HOST:PORT (wait for one), e.g. udp:127.0.0.1:14550"
                )
            })?;
        Ok(match kind {
            "listen" => Endpoint::Listen(resolved),
            _ => Endpoint::To(resolved),
        })
    }
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Endpoint::To(a) => write!(f, "udp:{a}"),
            Endpoint::Listen(a) => write!(f, "listen:{a}"),
        }
    }
}

/// One open endpoint.
#[derive(Debug)]
pub(crate) struct Link {
    /// The endpoint as given, for messages.
    pub(crate) endpoint: Endpoint,
    socket: UdpSocket,
    peer: Option<SocketAddr>,
    fixed: bool,
    /// Sends that failed (no ground station listening yet is normal).
    pub(crate) send_failures: u64,
}

impl Link {
    pub(crate) fn open(e: &Endpoint) -> Result<Link, String> {
        // The socket's address family is the ground station's (an IPv4
        // socket cannot send to ::1).
        let any = |a: &SocketAddr| -> SocketAddr {
            match (a.is_ipv4(), a.ip().is_loopback()) {
                (true, true) => SocketAddr::from(([127, 0, 0, 1], 0)),
                (true, false) => SocketAddr::from(([0, 0, 0, 0], 0)),
                (false, true) => SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, 0)),
                (false, false) => SocketAddr::from((std::net::Ipv6Addr::UNSPECIFIED, 0)),
            }
        };
        let (bind, peer, fixed) = match e {
            Endpoint::To(a) => (any(a), Some(*a), true),
            Endpoint::Listen(a) => (*a, None, false),
        };
        let socket = UdpSocket::bind(bind)
            .and_then(|s| s.set_nonblocking(true).map(|()| s))
            .map_err(|err| format!("--mavlink {e}: cannot open a UDP socket on {bind}: {err}"))?;
        Ok(Link {
            endpoint: e.clone(),
            socket,
            peer,
            fixed,
            send_failures: 0,
        })
    }

    /// A datagram if one is waiting.
    pub(crate) fn poll(&mut self, buf: &mut [u8]) -> Result<Option<(usize, SocketAddr)>, String> {
        match self.socket.recv_from(buf) {
            Ok(r) => Ok(Some(r)),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(None),
            // A ground station not (yet) listening on a loopback port makes
            // the kernel report the last send refused: not an input.
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => Ok(None),
            Err(e) => Err(format!("receiving from a ground station failed: {e}")),
        }
    }

    /// A ground station was heard at `from`: a listening endpoint answers it.
    pub(crate) fn heard(&mut self, from: SocketAddr) {
        if !self.fixed {
            self.peer = Some(from);
        }
    }

    pub(crate) fn send(&mut self, bytes: &[u8]) {
        if let Some(p) = self.peer
            && self.socket.send_to(bytes, p).is_err()
        {
            self.send_failures += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_parse_or_say_what_they_should_be() {
        assert_eq!(
            Endpoint::parse("udp:127.0.0.1:14550"),
            Ok(Endpoint::To("127.0.0.1:14550".parse().unwrap()))
        );
        assert_eq!(
            Endpoint::parse("127.0.0.1:14540"),
            Ok(Endpoint::To("127.0.0.1:14540".parse().unwrap()))
        );
        assert_eq!(
            Endpoint::parse("listen:0.0.0.0:14560"),
            Ok(Endpoint::Listen("0.0.0.0:14560".parse().unwrap()))
        );
        assert_eq!(
            Endpoint::parse("udp:nowhere"),
            Err(
                "\"udp:nowhere\" is not an endpoint: udp:HOST:PORT (send to a ground station) \
                 or listen:HOST:PORT (wait for one), e.g. udp:127.0.0.1:14550"
                    .into()
            )
        );
    }
}
