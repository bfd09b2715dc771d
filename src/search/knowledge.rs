//! What the search asks at interior nodes before searching: exact draws and draw bounds from the
//! recognizers (insufficient material, Heinz-style material recognizers, the blockage detector of
//! Tabibi, Felner and Netanyahu), and the endgame tables (`egtb::play::probe`): a position in a table
//! gets its exact value, judged under the 50-move rule with the node's own half-move counter.
//! Where Fortress's own tables do not cover a position, Syzygy's WDL tables (`egtb::play::syzygy`)
//! may: they are exact only right after a zeroing move, so they are asked only at full-width
//! nodes whose counter is 0.

use super::value::{table_mate, table_win, Value, DRAW};
use crate::chess::{Color, PieceType, Position};
use crate::egtb::format::Wdl5;
use crate::egtb::play::probe::{material_key, position_material, TableVerdict, TbProbe, TbReader};
use crate::egtb::play::syzygy::Syzygy;
use crate::recognize::{self, BlockageTable, Bound, Men, Outcome, Wanted};
use std::sync::Arc;

/// Syzygy tables as the search uses them: the UCI options `SyzygyPath`, `SyzygyProbeDepth`,
/// `Syzygy50MoveRule` and `SyzygyProbeLimit`.
#[derive(Clone)]
pub struct SyzygyUse {
    pub tables: Arc<Syzygy>,
    /// Nodes with less remaining depth are not probed (their subtrees are cheap to search).
    pub probe_depth: i32,
    /// Whether cursed wins and blessed losses are draws (the game's rule) or wins and losses.
    pub rule50: bool,
    /// Positions with more men (kings counted) are not probed.
    pub max_men: u32,
}

impl SyzygyUse {
    /// The options' defaults, as engines that probe Syzygy have them: every node of depth 1 or
    /// more, the 50-move rule, up to seven men.
    pub const DEFAULT_PROBE_DEPTH: i32 = 1;
    pub const DEFAULT_MAX_MEN: u32 = 7;

    pub fn defaults(tables: Arc<Syzygy>) -> SyzygyUse {
        SyzygyUse {
            tables,
            probe_depth: Self::DEFAULT_PROBE_DEPTH,
            rule50: true,
            max_men: Self::DEFAULT_MAX_MEN,
        }
    }

    /// The men a probe may have: the option's limit, and no more than the tables hold.
    pub(super) fn men(&self) -> u32 {
        self.max_men.min(self.tables.max_men() as u32)
    }
}

/// What is known about a node without searching it, for the side to move.
pub enum Verdict {
    Exact(Value),
    /// The node is worth at most this (beta may be lowered to it).
    AtMost(Value),
    /// The node is worth at least this (alpha may be raised to it).
    AtLeast(Value),
    Unknown,
}

/// One per search thread: the blockage detector's pawn hash is the thread's own, kept from one
/// search to the next (it caches what depends on the pawns and kings alone).
pub struct Knowledge<'a> {
    /// None when `BlockageDetection` is off.
    blockage: Option<&'a mut BlockageTable>,
    tables: Option<TbReader>,
    syzygy: Option<SyzygyUse>,
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

/// The score of a table value for its side to move, at `ply` from the root, with `halfmove`
/// plies on the counter (`TbProbe::verdict`); None for a win without a DTM, which a sound
/// table never holds. The root (`search::thread`) scores its moves with it too, so both agree
/// on what a table line is worth.
pub fn table_score(p: &TbProbe, halfmove: u16, ply: usize) -> Option<Value> {
    p.verdict(halfmove).map(|v| verdict_score(v, ply))
}

/// The score of a table verdict at `ply` from the root: a win under the 50-move rule is a mate
/// in the table's DTM counted from the root; a win the rule spoils is a draw plus `CURSED`;
/// losses symmetrically.
pub fn verdict_score(v: TableVerdict, ply: usize) -> Value {
    match v {
        TableVerdict::Win(Some(plies)) => table_mate(ply + plies as usize, true),
        TableVerdict::Loss(Some(plies)) => table_mate(ply + plies as usize, false),
        TableVerdict::Win(None) => table_win(ply, true),
        TableVerdict::Loss(None) => table_win(ply, false),
        TableVerdict::CursedWin => DRAW + CURSED,
        TableVerdict::BlessedLoss => DRAW - CURSED,
        TableVerdict::Draw => DRAW,
    }
}

/// The score of a Syzygy result met `ply` plies from the root: a win without a distance
/// (`table_win`), a win or loss the 50-move rule spoils as `table_score` scores it.
pub fn syzygy_score(wdl: Wdl5, ply: usize) -> Value {
    match wdl {
        Wdl5::Win => table_win(ply, true),
        Wdl5::Loss => table_win(ply, false),
        Wdl5::CursedWin => DRAW + CURSED,
        Wdl5::BlessedLoss => DRAW - CURSED,
        Wdl5::Draw => DRAW,
    }
}

/// 2^14 slots, about 0.8 MB per thread: pawn endings reuse few pawn structures.
pub(crate) const BLOCKAGE_SLOTS_LOG2: u32 = 14;

impl<'a> Knowledge<'a> {
    pub fn new(
        blockage: Option<&'a mut BlockageTable>,
        tables: Option<TbReader>,
        syzygy: Option<SyzygyUse>,
    ) -> Knowledge<'a> {
        Knowledge {
            blockage,
            tables,
            syzygy,
            tbhits: 0,
            requested: [0; 32],
            n_requested: 0,
            gen_max_men: 0,
        }
        .with_generation()
    }

    fn with_generation(mut self) -> Knowledge<'a> {
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

    /// The table's score of a node at `ply` from the root (`table_score`, judged with the
    /// node's own counter), if its position is in a table; asks for a missing table otherwise.
    #[inline]
    fn table(&mut self, pos: &Position, ply: usize) -> Option<Value> {
        let reader = self.tables.as_mut()?;
        let Some(v) = reader.verdict(pos) else {
            if pos.men() as u8 <= self.gen_max_men && pos.castling_rights() == 0 && pos.men() >= 3 {
                self.request_missing(pos);
            }
            return None;
        };
        self.tbhits += 1;
        Some(verdict_score(v, ply))
    }

    /// Syzygy's score of a node `depth` plies from the horizon, if its tables may answer: a
    /// full-width node of enough depth, right after a zeroing move (counter 0, where WDL is
    /// exact), within the men the tables and the options allow.
    #[inline]
    fn syzygy(&mut self, pos: &Position, ply: usize, depth: i32) -> Option<Value> {
        let s = self.syzygy.as_ref()?;
        if pos.men() > s.men() || depth < s.probe_depth || pos.halfmove_clock() != 0 {
            return None;
        }
        let wdl = s.tables.wdl(pos)?;
        self.tbhits += 1;
        Some(syzygy_score(
            if s.rule50 { wdl } else { wdl.without_rule() },
            ply,
        ))
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

    /// Claims of the blockage detector since the last call (the paper's count of blockages found
    /// in the search).
    pub fn take_blockages(&mut self) -> u64 {
        self.blockage.as_mut().map_or(0, |b| b.take_claims())
    }

    /// What is known of `pos`, `depth` plies from the horizon (0 in the quiescence search); the
    /// blockage detector looks only for the draw bounds `wanted` (material recognizers and
    /// tables answer in full: they cost little).
    pub fn probe(&mut self, pos: &Position, ply: usize, depth: i32, wanted: Wanted) -> Verdict {
        if pos.insufficient_material() {
            return Verdict::Exact(DRAW);
        }
        if let Some(v) = self.table(pos, ply) {
            return Verdict::Exact(v);
        }
        if let Some(v) = self.syzygy(pos, ply, depth) {
            return Verdict::Exact(v);
        }
        // The material recognizers need a bare king, or no pawns and no heavy piece; skip the
        // call everywhere else (most nodes).
        let bare = |c: Color| pos.color_bb(c) == pos.pieces(c, PieceType::King);
        let heavy_or_pawns = pos.kind_bb(PieceType::Pawn)
            | pos.kind_bb(PieceType::Rook)
            | pos.kind_bb(PieceType::Queen);
        let material = if bare(Color::White) || bare(Color::Black) || heavy_or_pawns.is_empty() {
            recognize::recognize(&Men::from(pos))
        } else {
            None
        };
        let blockage = match &mut self.blockage {
            Some(table) if wanted.at_most_draw || wanted.at_least_draw => table.probe(pos, wanted),
            _ => None,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::egtb::format::TbValue;
    use crate::search::value::MAX_PLY;
    use crate::search::Score;

    /// A table value won (lost) in `moves` by DTM, its zeroing move one ply away.
    fn probe(moves: u16, won: bool) -> TbProbe {
        let (dtm, dtz) = if won {
            (TbValue::win(moves), TbValue::win(1))
        } else {
            (TbValue::loss(moves), TbValue::loss(2))
        };
        let (dtm, dtz) = (dtm.unwrap(), dtz.unwrap());
        TbProbe {
            dtm,
            dtz,
            dtz50: dtz,
        }
    }

    #[test]
    fn table_mates_past_127_moves_keep_their_length() {
        // The UCI layer prints `Score::Mate(n)` as `score mate n` for any i32
        // (`uci::protocol`, `info_long_mates`); here the table value becomes that score.
        for moves in [127u16, 128, 200, 500] {
            let n = moves as i32;
            let at_root = |won| Score::from_value(table_score(&probe(moves, won), 0, 0).unwrap());
            assert_eq!(at_root(true), Score::Mate(n), "win in {moves}");
            assert_eq!(at_root(false), Score::Mate(-n), "loss in {moves}");
            // Met deep in the search, the distance counts from the root: MAX_PLY = 128 plies
            // is 64 moves more for either side.
            let deep =
                |won| Score::from_value(table_score(&probe(moves, won), 0, MAX_PLY).unwrap());
            assert_eq!(deep(true), Score::Mate(n + 64), "win in {moves}");
            assert_eq!(deep(false), Score::Mate(-n - 64), "loss in {moves}");
        }
    }

    #[test]
    fn table_wins_without_a_distance_rank_below_every_mate() {
        // A five-man side whose DTM the file leaves out: a win above any evaluation, below
        // any mate, and never printed as a mate.
        let win = verdict_score(TableVerdict::Win(None), 10);
        let loss = verdict_score(TableVerdict::Loss(None), 10);
        assert_eq!((win, loss), (table_win(10, true), table_win(10, false)));
        let longest = verdict_score(TableVerdict::Win(Some(2_000)), MAX_PLY);
        assert!(win < longest && win > 10_000 && loss == -win);
        assert!(!matches!(Score::from_value(win), Score::Mate(_)));
    }

    #[test]
    fn table_wins_the_counter_spoils_are_cursed_draws() {
        // With 100 plies on the counter no zeroing move comes before the claim.
        assert_eq!(table_score(&probe(200, true), 100, 0), Some(DRAW + CURSED));
        assert_eq!(table_score(&probe(200, false), 100, 0), Some(DRAW - CURSED));
    }
}
