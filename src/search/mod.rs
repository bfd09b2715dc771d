//! The search: iterative deepening over a principal variation search with quiescence, a shared
//! transposition table, Lazy SMP threads and time management.
//!
//! It sees the board through `chess`, scores leaves with `eval`, and asks `knowledge` (the
//! recognizers and endgame tables) at interior nodes. It reports through a callback, so it knows
//! nothing of the UCI text protocol.

mod knowledge;
mod ordering;
mod see;
mod thread;
pub mod time;
pub mod tt;
mod value;
mod worker;

pub use knowledge::SyzygyUse;
pub use thread::{Control, Engine, Limits, Report, Score, SearchResult, THREAD_MEMORY_BYTES};
pub use tt::Bound;
pub use value::{Value, DRAW, INFINITE, MATE, MATE_BOUND};
