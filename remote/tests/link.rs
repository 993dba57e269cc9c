//! Remote calls over zenoh on the loopback (feature `zenoh`): answers and
//! refusals come back; a server hung in its own code fails the call at
//! its deadline; a server that closes fails the next call at once, and a
//! caller that closes ends the server.
#![cfg(feature = "zenoh")]

use std::time::{Duration, Instant};

use lockstep_remote::link::{Caller, Flow, RemoteError, Server};
use lockstep_remote::net::NetOptions;
use lockstep_remote::processes::{ProcessOptions, Processes};

fn options(name: &str, listen: bool, port: u16) -> NetOptions {
    let e = format!("tcp/127.0.0.1:{port}");
    NetOptions {
        session: format!("{name}-{}", std::process::id()),
        listen: if listen { vec![e.clone()] } else { vec![] },
        connect: if listen { vec![] } else { vec![e] },
        multicast: false,
        lease: Duration::from_secs(1),
    }
}

fn port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn calls_are_answered_refused_or_cut_at_their_deadline() {
    let p = port();
    let caller = Caller::open(&options("remote-a", true, p)).unwrap();
    let server = std::thread::spawn(move || {
        let s = Server::open(&options("remote-a", false, p), "echo").unwrap();
        s.serve(Duration::from_secs(20), |req| match req {
            b"hang" => {
                std::thread::sleep(Duration::from_millis(1500));
                (Ok(b"late".to_vec()), Flow::Continue)
            }
            b"bad" => (Err("no such thing".into()), Flow::Continue),
            b"bye" => (Ok(b"bye".to_vec()), Flow::Stop),
            other => (Ok([b"echo:", other].concat()), Flow::Continue),
        })
    });
    let t = caller
        .target("echo", "the echo server", Duration::from_secs(20))
        .unwrap();
    let d = Duration::from_secs(5);
    assert_eq!(caller.call(&t, b"hi".to_vec(), d).unwrap(), b"echo:hi");
    assert_eq!(
        caller.call(&t, b"bad".to_vec(), d).unwrap_err(),
        RemoteError::Refused("no such thing".into())
    );
    let started = Instant::now();
    let e = caller
        .call(&t, b"hang".to_vec(), Duration::from_millis(300))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "the echo server did not answer within the deadline of 0.3 s"
    );
    assert!(started.elapsed() < Duration::from_millis(1000));
    // The late answer does not confuse the next call.
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(
        caller.call(&t, b"again".to_vec(), d).unwrap(),
        b"echo:again"
    );
    assert_eq!(caller.call(&t, b"bye".to_vec(), d).unwrap(), b"bye");
    server.join().unwrap().unwrap();
    // The server has closed: its token vanishes and the next call fails
    // at once.
    let started = Instant::now();
    while t.alive().is_ok() {
        assert!(started.elapsed() < Duration::from_secs(3));
        std::thread::sleep(Duration::from_millis(10));
    }
    let e = caller.call(&t, b"hi".to_vec(), d).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the echo server left: its liveliness token vanished (it closed, crashed, was killed, or stopped answering for the lease of 1 s)"
    );
}

#[test]
fn a_server_ends_when_its_caller_leaves_or_never_comes() {
    let p = port();
    let caller = Caller::open(&options("remote-b", true, p)).unwrap();
    let server = std::thread::spawn(move || {
        let s = Server::open(&options("remote-b", false, p), "m").unwrap();
        s.serve(Duration::from_secs(20), |_| (Ok(vec![]), Flow::Continue))
    });
    let t = caller.target("m", "m", Duration::from_secs(20)).unwrap();
    caller.call(&t, vec![], Duration::from_secs(5)).unwrap();
    drop(t);
    drop(caller);
    assert_eq!(
        server.join().unwrap().unwrap_err().to_string(),
        "the caller left: its liveliness token vanished"
    );
    let lone = Server::open(&options("remote-c", true, port()), "m").unwrap();
    assert_eq!(
        lone.serve(Duration::from_millis(300), |_| (Ok(vec![]), Flow::Continue))
            .unwrap_err()
            .to_string(),
        "the caller left: it did not appear within 0.3 s"
    );
}

#[test]
fn a_runs_link_calls_no_more_after_a_missed_deadline() {
    // A run's finish must not wait a second deadline on a peer that hung.
    let p = port();
    let mut processes = Processes::open(ProcessOptions {
        stop: None,
        net: options("remote-c", true, p),
        deadline: Duration::from_millis(300),
        wait: Duration::from_secs(20),
    })
    .unwrap();
    let server = std::thread::spawn(move || {
        let s = Server::open(&options("remote-c", false, p), "slow").unwrap();
        s.serve(Duration::from_secs(20), |req| match req {
            b"hang" => {
                std::thread::sleep(Duration::from_millis(1500));
                (Ok(b"late".to_vec()), Flow::Continue)
            }
            b"bye" => (Ok(b"bye".to_vec()), Flow::Stop),
            other => (Ok(other.to_vec()), Flow::Continue),
        })
    });
    let link = processes.link("slow", "the slow server").unwrap();
    assert_eq!(link.call(b"hi".to_vec()).unwrap(), b"hi");
    let deadline = "the process of the slow server did not answer within the deadline of 0.3 s";
    assert_eq!(
        link.call(b"hang".to_vec()).unwrap_err().to_string(),
        deadline
    );
    let started = Instant::now();
    assert_eq!(
        link.call(b"bye".to_vec()).unwrap_err(),
        RemoteError::Abandoned {
            peer: "the process of the slow server".into(),
            earlier: deadline.into(),
        }
    );
    assert!(started.elapsed() < Duration::from_millis(100));
    drop(link);
    drop(processes);
    // With its caller gone the server ends.
    assert!(server.join().unwrap().is_err());
}
