//! What the search asks at interior nodes before searching: exact draws and draw bounds from the
//! recognizers (insufficient material, Heinz-style material recognizers, the blockage detector of
//! Tabibi, Felner and Netanyahu), and the endgame tables (`egtb::probe`): a position in a table
//! gets its exact value, judged under the 50-move rule with the node's own half-move counter.

use super::value::{mate_in, mated_in, Value, DRAW};
use crate::chess::{Color, PieceType, Position};
use crate::egtb::probe::{material_key, position_material, TbReader, Wdl};
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
    tables: Option<TbReader>,
    /// Table probes that answered (the search adds them to `tbhits`).
    pub tbhits: u64,
    /// Missing endgames this thread has already asked the background worker for (a fixed
    /// array: the hot path does not allocate).
    requested: [u32; 32],
    n_requested: usize,
    /// Endgames up to this many men are asked for when missing (0: generation off).
    gen_max_men: u8,
}

/// A win (loss) that the 50-move rule turns into a draw scores this much above (below) a
/// draw, so that the side that could still win if the defender errs keeps trying.
pub const CURSED: Value = 2;

/// 2^14 slots, about 0.8 MB per thread: pawn endings reuse few pawn structures.
const BLOCKAGE_SLOTS_LOG2: u32 = 14;

impl Knowledge {
    pub fn new(use_blockage: bool, tables: Option<TbReader>) -> Knowledge {
        Knowledge {
            blockage: BlockageTable::new(BLOCKAGE_SLOTS_LOG2),
            use_blockage,
            tables,
            tbhits: 0,
            requested: [0; 32],
            n_requested: 0,
            gen_max_men: 0,
        }
        .with_generation()
    }

    fn with_generation(mut self) -> Knowledge {
        if let Some(r) = &self.tables {
            let tb = r.tablebases();
            if tb
                .generate_missing
                .load(std::sync::atomic::Ordering::Relaxed)
            {
                self.gen_max_men = tb
                    .generate_max_men
                    .load(std::sync::atomic::Ordering::Relaxed);
            }
        }
        self
    }

    /// The table's verdict on a node at `ply` from the root, if its position is in a table.
    /// Under the 50-move rule with the node's counter h (exact, see `TbProbe::wdl50`): a win
    /// scores as mate in the table's DTM from here; a win the rule spoils scores as a draw plus
    /// `CURSED`; losses symmetrically.
    #[inline]
    fn table(&mut self, pos: &Position, ply: usize) -> Option<Value> {
        let reader = self.tables.as_mut()?;
        let Some(p) = reader.probe(pos) else {
            if pos.men() as u8 <= self.gen_max_men && pos.castling_rights() == 0 && pos.men() >= 3 {
                self.request_missing(pos);
            }
            return None;
        };
        self.tbhits += 1;
        let v = match p.wdl50(pos.halfmove_clock()) {
            Wdl::Win => mate_in(ply + p.dtm_plies()? as usize),
            Wdl::Loss => mated_in(ply + p.dtm_plies()? as usize),
            Wdl::Draw => match p.wdl() {
                Wdl::Win => DRAW + CURSED,
                Wdl::Loss => DRAW - CURSED,
                Wdl::Draw => DRAW,
            },
        };
        Some(v)
    }

    /// Asks for the table of a position whose endgame is missing (once per thread and endgame).
    #[cold]
    fn request_missing(&mut self, pos: &Position) {
        let Some(reader) = self.tables.as_mut() else {
            return;
        };
        let tb = reader.tablebases();
        let m = position_material(pos).canonical().0;
        let key = material_key(&m);
        if self.requested[..self.n_requested].contains(&key) {
            return;
        }
        if self.n_requested < self.requested.len() {
            self.requested[self.n_requested] = key;
            self.n_requested += 1;
        }
        let tb = std::sync::Arc::clone(tb);
        if !reader.registry().has(&m) {
            tb.request(&m);
        }
    }

    pub fn probe(&mut self, pos: &Position, ply: usize) -> Verdict {
        if pos.insufficient_material() {
            return Verdict::Exact(DRAW);
        }
        if let Some(v) = self.table(pos, ply) {
            return Verdict::Exact(v);
        }
        let men = Men::from(pos);
        // The material recognizers need a bare king, or no pawns and no heavy piece; skip the
        // call everywhere else (most nodes).
        let bare = |c: Color| pos.color_bb(c) == pos.pieces(c, PieceType::King);
        let heavy_or_pawns = pos.kind_bb(PieceType::Pawn)
            | pos.kind_bb(PieceType::Rook)
            | pos.kind_bb(PieceType::Queen);
        let material = if bare(Color::White) || bare(Color::Black) || heavy_or_pawns.is_empty() {
            recognize::recognize(&men)
        } else {
            None
        };
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
