//! The environment: atmosphere, gravity, the world origin on WGS-84.

pub mod atmosphere;
pub mod geodesy;
pub mod gravity;
