//! What the search asks at interior nodes before searching: exact draws and draw bounds from the
//! recognizers (insufficient material, Heinz-style material recognizers, the blockage detector of
//! Tabibi, Felner and Netanyahu). This is also where endgame tables answer, once present.

use super::value::{Value, DRAW};
use crate::chess::Position;
use crate::recognize::{self, BlockageTable, Bound, Men, Outcome};

/// What is known about a node without searching it, for the side to move.
pub enum Verdict {
    Exact(Value),
    /// The node is worth at most this (beta may be lowered to it).
    AtMost(Value),
    /// The node is worth at least this (alpha may be raised to it).
    AtLeast(Value),
    Unknown,
}

/// One per search thread: the blockage detector's pawn hash is the thread's own.
pub struct Knowledge {
    blockage: BlockageTable,
    use_blockage: bool,
}

/// 2^14 slots, about 0.8 MB per thread: pawn endings reuse few pawn structures.
const BLOCKAGE_SLOTS_LOG2: u32 = 14;

impl Knowledge {
    pub fn new(use_blockage: bool) -> Knowledge {
        Knowledge {
            blockage: BlockageTable::new(BLOCKAGE_SLOTS_LOG2),
            use_blockage,
        }
    }

    pub fn probe(&mut self, pos: &Position) -> Verdict {
        if pos.insufficient_material() {
            return Verdict::Exact(DRAW);
        }
        let men = Men::from(pos);
        let material = recognize::recognize(&men);
        let blockage = if self.use_blockage && men.is_pawn_ending() {
            self.blockage.bound(&men)
        } else {
            None
        };
        let at_most =
            |b: Option<Bound>| matches!(b, Some(Bound::AtMostDraw | Bound::Exact(Outcome::Draw)));
        let at_least =
            |b: Option<Bound>| matches!(b, Some(Bound::AtLeastDraw | Bound::Exact(Outcome::Draw)));
        // A recognised win or loss carries no distance: the search must still find the way, so
        // it is given nothing rather than a score that would hide the path.
        match (
            at_most(material) || at_most(blockage),
            at_least(material) || at_least(blockage),
        ) {
            (true, true) => Verdict::Exact(DRAW),
            (true, false) => Verdict::AtMost(DRAW),
            (false, true) => Verdict::AtLeast(DRAW),
            (false, false) => Verdict::Unknown,
        }
    }
}
