//! What the search asks at interior nodes before searching: the place where recognizers and
//! endgame tables return an exact score or narrow the window. For now: draws by insufficient
//! material.

use super::value::{Value, DRAW};
use crate::chess::Position;

/// What is known about a node without searching it.
pub enum Knowledge {
    /// The node's value, exactly.
    Exact(Value),
    /// Nothing.
    Unknown,
}

pub fn probe(pos: &Position) -> Knowledge {
    if pos.insufficient_material() {
        return Knowledge::Exact(DRAW);
    }
    Knowledge::Unknown
}
