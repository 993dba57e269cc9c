#![allow(warnings, clippy::all)]
pub mod builder;
pub mod datastream;
mod display;
pub mod encode;
pub mod errors;
mod field_helpers;
mod formats;
pub mod message_buf;
pub mod model;
#[allow(clippy::redundant_else)]
pub mod parser;
mod tokenizer;


