//! The UCI side of the engine: how the GUI talks to us and how we answer.
//!
//! `protocol` turns one input line into a typed `Command` and our typed output (info, id, option,
//! bestmove) into text; it is `vampirc-uci` behind our own thin layer.

pub mod protocol;
pub mod session;
