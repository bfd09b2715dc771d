//! The retrograde solver for one endgame and one metric (Thompson 1996, Section 3, with the
//! waves of Section 6 and the conversion case of his Diagram 1; metrics as in Bourzutschky,
//! Tamplin, Haworth 2005, Sections 2-4).
//!
//! Values are worked in plies. An initial forward pass gives every entry the best value of its
//! *terminal* moves (captures and promotions into sub-endgames; for DTZ and DTZ50 also pawn
//! moves, whose value is the win/draw/loss of the position reached) and resolves mates,
//! stalemates and positions whose every move is terminal. Pass n then takes every entry resolved
//! at depth n: un-moves from a loss in n give wins in n + 1 directly; un-moves from a win in n
//! mark candidates, which a forward check resolves as losses in n + 1 once every non-terminal
//! move leads to a resolved win (Thompson's "verify" step). So the loser's own conversion
//! (Diagram 1) is just a terminal option that the forward passes weigh with the others.
//!
//! DTM and DTZ share one init pass when memory allows (`Solver::init_dtm_dtz`). DTZ50 of an
//! endgame with pawns is solved one pawn level at a time (`Solver::run_by_pawn_level`), so
//! that every pawn push's target is final before its value is needed.

use super::layout::Layout;
use super::moves::{
    count_inner_moves, for_each_conversion, for_each_frame_move, for_each_frame_unmove,
    for_each_move, for_each_pawn_push, for_each_unmove, for_each_unmove_set, in_check, FrameMover,
    Legality, MoveClass, NONE,
};
use super::pool::Pool;
use crate::chess::{Bitboard, Color, PieceType, Square};
use crate::egtb::format::plies::{
    self, backed, better, depth, dtm_plies, is_loss, is_win, loss, wdl_of, wdl_of_result, win,
    zeroing, CODE_DRAW, CODE_NONE, RULE50_PLIES,
};
use crate::egtb::format::{Metric, TbValue, Wdl5};
use crate::egtb::index::{Half, Symmetry, TbPosition};
use crate::egtb::play::tables::EndgameTables;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU64, AtomicU8, Ordering::Relaxed};

// ------------------------------------------------------------------------------------------
// Working values: the codes of `egtb::format::plies`, plus a flag for "final".

pub const RESOLVED: u16 = 0x8000;

/// A final working code as the file stores it: DTM in winner's moves, DTZ and DTZ50 in plies.
pub fn to_file_value(metric: Metric, code: u16) -> TbValue {
    let c = code & !RESOLVED;
    let v = match c {
        CODE_NONE => Some(TbValue::BROKEN),
        CODE_DRAW => Some(TbValue::DRAW),
        c if metric == Metric::Dtm && c % 2 == 0 => TbValue::win(depth(c).div_ceil(2)),
        c if metric == Metric::Dtm => TbValue::loss(depth(c) / 2),
        c if c % 2 == 0 => TbValue::win(depth(c)),
        c => TbValue::loss(depth(c)),
    };
    v.expect("depths stay far below the encoding's 32767")
}

// ------------------------------------------------------------------------------------------
// Sub-endgames.

/// The tables one move away (captures, promotions), looked up by what the move did.
pub struct SubTables {
    pub tables: Vec<EndgameTables>,
    /// By mover, captured kind (5 none), promoted kind (5 none): index into `tables`,
    /// `KINGS_ONLY` for a bare-kings draw, `IMPOSSIBLE` if the material cannot arise.
    slot: [[[u8; 6]; 6]; 2],
    /// Per table: the 50-move rule changes none of its results
    /// (`EndgameTables::rule50_changes_nothing`), or no move of this endgame reaches it.
    clean: Vec<bool>,
}

const KINGS_ONLY: u8 = 254;
const IMPOSSIBLE: u8 = 255;

impl SubTables {
    /// `tables` must hold every sub-endgame of `material` (except bare kings), and may hold
    /// more: the endgames that one-sided DTM is worked out from (`play::tables::open_subs`).
    pub fn new(material: &crate::egtb::Material, tables: Vec<EndgameTables>) -> SubTables {
        let mut slot = [[[IMPOSSIBLE; 6]; 6]; 2];
        for mover in Color::BOTH {
            for cap in 0..6u8 {
                for promo in 0..6u8 {
                    let mut counts = [[0u8; 5]; 2];
                    for c in Color::BOTH {
                        for (t, n) in counts[c.index()].iter_mut().enumerate() {
                            *n = material.count(c, PieceType::from_index(t));
                        }
                    }
                    if cap == NONE && promo == NONE {
                        continue;
                    }
                    if cap != NONE {
                        let n = &mut counts[(!mover).index()][cap as usize];
                        if *n == 0 {
                            continue;
                        }
                        *n -= 1;
                    }
                    if promo != NONE {
                        if promo == PieceType::Pawn.index() as u8
                            || promo == PieceType::King.index() as u8
                        {
                            continue;
                        }
                        let own = &mut counts[mover.index()];
                        if own[0] == 0 {
                            continue;
                        }
                        own[0] -= 1;
                        own[promo as usize] += 1;
                    }
                    let m = crate::egtb::Material::from_counts(counts[0], counts[1]);
                    slot[mover.index()][cap as usize][promo as usize] = if m.men() == 2 {
                        KINGS_ONLY
                    } else {
                        let c = m.canonical().0;
                        match tables.iter().position(|t| t.material() == c) {
                            Some(i) => i as u8,
                            None => IMPOSSIBLE,
                        }
                    };
                }
            }
        }
        // Only the endgames a move reaches speak for this one's rule (`tables` may hold theirs).
        let reached: Vec<u8> = slot.iter().flatten().flatten().copied().collect();
        let clean = (0..tables.len())
            .map(|i| !reached.contains(&(i as u8)) || tables[i].rule50_changes_nothing())
            .collect();
        SubTables {
            tables,
            slot,
            clean,
        }
    }

    /// The table (index into `tables`) that `mover`'s capture of a man of kind `captured`
    /// (no promotion) leads to; None for bare kings or material that cannot arise.
    pub fn capture_table(&self, mover: Color, captured: PieceType) -> Option<usize> {
        match self.slot[mover.index()][captured.index()][NONE as usize] {
            KINGS_ONLY | IMPOSSIBLE => None,
            s => Some(s as usize),
        }
    }

    /// Is the 50-move rule known to change no result in any sub-endgame (their DTZ50 files
    /// equal to their DTZ files)? Then DTZ50 of this endgame equals its DTZ whenever no DTZ
    /// value exceeds 100 plies.
    pub fn rule50_clean(&self) -> bool {
        self.clean.iter().all(|&c| c)
    }

    /// Can `mover`'s capture of `captured` / promotion to `promoted` reach a position whose
    /// result the 50-move rule changes? (True when not known to be impossible.)
    #[inline]
    fn rule50_bites(&self, mover: Color, captured: u8, promoted: u8) -> bool {
        match self.slot[mover.index()][captured as usize][promoted as usize] {
            KINGS_ONLY | IMPOSSIBLE => false,
            s => !self.clean[s as usize],
        }
    }

    /// Can any capture of `mover` that is no promotion reach such a position?
    fn rule50_bites_without_promotion(&self, mover: Color) -> bool {
        (0..6).any(|cap| self.rule50_bites(mover, cap, NONE))
    }

    /// Does the 50-move rule change the result of `succ`, reached by `mover`'s capture of
    /// `captured` / promotion to `promoted`? (A DTZ50 win or loss is one under DTZ too: only
    /// a DTZ50 draw needs DTZ's result.)
    fn rule50_changes(&self, mover: Color, captured: u8, promoted: u8, succ: &TbPosition) -> bool {
        let Some((t, half, idx)) = self.locate(mover, captured, promoted, succ) else {
            return false; // bare kings
        };
        matches!(
            t.result(half, idx),
            Some(Wdl5::CursedWin | Wdl5::BlessedLoss)
        )
    }

    /// The table and entry of `succ`, reached by `mover`'s capture of `captured` / promotion
    /// to `promoted`; None for bare kings.
    #[inline]
    fn locate(
        &self,
        mover: Color,
        captured: u8,
        promoted: u8,
        succ: &TbPosition,
    ) -> Option<(&EndgameTables, Half, u64)> {
        match self.slot[mover.index()][captured as usize][promoted as usize] {
            KINGS_ONLY => None,
            IMPOSSIBLE => panic!("sub-endgame table missing for a legal move (checked on load)"),
            s => {
                let t = &self.tables[s as usize];
                // A legal position reached by a legal move is always indexable (the index
                // round-trip tests cover every legal 3-4 man position).
                let (half, idx) = t.entry(succ).expect("legal successor has an index");
                Some((t, half, idx))
            }
        }
    }

    /// The result of `succ`, reached by `mover`'s capture of `captured` / promotion to
    /// `promoted`, with the 50-move rule: all that DTZ and DTZ50 need of a sub-endgame.
    #[inline]
    pub fn result(&self, mover: Color, captured: u8, promoted: u8, succ: &TbPosition) -> Wdl5 {
        match self.locate(mover, captured, promoted, succ) {
            None => Wdl5::Draw,
            Some((t, half, idx)) => t.result(half, idx).expect("index within the file"),
        }
    }

    /// The value of `succ`, reached by `mover`'s capture of `captured` / promotion to
    /// `promoted`, in the sub-endgame's file for `metric`.
    #[inline]
    pub fn value(
        &self,
        metric: Metric,
        mover: Color,
        captured: u8,
        promoted: u8,
        succ: &TbPosition,
    ) -> TbValue {
        match self.locate(mover, captured, promoted, succ) {
            None => TbValue::DRAW,
            Some((t, half, idx)) if metric == Metric::Dtm => t
                .dtm(half, idx, &self.tables[..])
                .expect("sub-endgames and theirs at hand"),
            Some((t, half, idx)) => t.value(metric, half, idx).expect("index within the file"),
        }
    }
}

// ------------------------------------------------------------------------------------------
// The solver.

/// Calls `f` with the entry of every predecessor of `pos`, the valid entry `idx`, by a move
/// that stays in the endgame (pawn moves only with `pawn_moves`).
#[inline]
pub(super) fn for_each_pred(
    layout: &Layout,
    idx: u64,
    pos: &TbPosition,
    pawn_moves: bool,
    mut f: impl FnMut(Half, u64),
) {
    if layout.unmoves_by_squares(idx, pos) {
        let h = Half::of(!pos.stm);
        for_each_unmove_set(pos, pawn_moves, |kind, to, froms| {
            layout.pred_entries(idx, pos, kind, to, froms, |i| f(h, i));
        });
        return;
    }
    for_each_unmove(pos, pawn_moves, |pred, kind| {
        let (h, i) = layout
            .encode_unmove(idx, pos, pred, kind)
            .expect("legal predecessor has an entry");
        f(h, i);
    })
}

/// `for_each_pred` for the entries `bits` of word `w` of half `h` at once, where a word is one
/// frame (`Layout::lone_last_man`): `f(ph, word, mask)` for each un-move, each bit of `mask`
/// one predecessor, as `for_each_pred` gives them entry by entry. False, and nothing called,
/// where the layout has no lone last man.
///
/// Where the word's kings both stand on the long diagonal, every predecessor frame is put in
/// normal form whole (`Layout::frame_word`), its lone man's squares split by the symmetry
/// each takes, as a king's un-move elsewhere is: entry by entry, each predecessor was encoded
/// whole (KQRKBN's DTM: `Layout::encode` 14% of its first passes, for about 4% of the
/// entries).
pub(super) fn for_each_pred_word(
    layout: &Layout,
    h: Half,
    w: u64,
    bits: u64,
    mut f: impl FnMut(Half, u64, u64),
) -> bool {
    let Some(lone) = layout.lone_last_man() else {
        return false;
    };
    let wf = WordFrame::new(layout, h, w);
    let m = !wf.frame.stm;
    let ph = Half::of(m);
    for_each_frame_unmove(&wf.frame, lone, bits, |pred, mover, mask| {
        wf.next_words(pred, mover, m, mask, |pw, sym, part| {
            f(ph, pw, sym.bitboard(Bitboard(part)).0)
        });
    });
    true
}

/// The quiet moves of the entries `on` of word `w` of half `h` at once (`for_each_frame_move`,
/// numbered): `f(sw, sym, at, mask, mirrored)` for each move, `sw` the successor's word in the
/// other half and `sym` what turns the frame's squares into that word's. For a move of another
/// man (`at` None) `mask` holds the lone man's squares in the frame where he lets it be made;
/// for one of the lone man himself from `at`, the squares he goes to. `mirrored` is the part of
/// `mask` where the successor is its own mirror image (`Layout::stabiliser` 2), for orbit
/// counting. Returns the entries of `on` that are their own mirror image, or None, and nothing
/// called, where the layout has no lone last man.
///
/// Where the word's kings both stand on the long diagonal, each successor frame is put in
/// normal form whole, as `for_each_pred_word` does.
pub(super) fn for_each_succ_word(
    layout: &Layout,
    h: Half,
    w: u64,
    on: u64,
    mut f: impl FnMut(u64, Symmetry, Option<Square>, u64, u64),
) -> Option<u64> {
    let lone = layout.lone_last_man()?;
    let wf = WordFrame::new(layout, h, w);
    // Only near a long diagonal may a position or its successors be their own mirror images.
    let near = !layout.no_symmetric_neighbours(&wf.frame);
    let mirrored = |succ: &TbPosition, mask: u64| {
        if near {
            mask & layout.self_symmetric_squares(succ)
        } else {
            0
        }
    };
    let u = wf.frame.stm;
    for_each_frame_move(&wf.frame, lone, on, |succ, mover, mask| {
        let at = mover.lone_square();
        wf.next_words(succ, mover, u, mask, |sw, sym, part| {
            f(sw, sym, at, part, mirrored(succ, part))
        });
    });
    Some(mirrored(&wf.frame, on))
}

/// Word `w`'s frame (every man but the lone last one), whose moves and un-moves lead to the
/// frames of other words (`for_each_pred_word`, `for_each_succ_word`).
struct WordFrame<'a> {
    layout: &'a Layout<'a>,
    w: u64,
    frame: TbPosition,
    /// The kings are not both on the long diagonal (`Layout::unmoves_by_squares`).
    by_squares: bool,
}

impl<'a> WordFrame<'a> {
    fn new(layout: &'a Layout<'a>, h: Half, w: u64) -> WordFrame<'a> {
        let frame = layout.frame(h, w);
        WordFrame {
            layout,
            w,
            by_squares: layout.unmoves_by_squares(w * 64, &frame),
            frame,
        }
    }

    /// The words of `next`, the frame one move or un-move of `mover` (a man of colour `c`)
    /// away, with the lone man on the squares `mask`: `f(word, sym, part)` for each part of
    /// `mask`, `sym` what turns its squares into the word's.
    #[inline(always)]
    fn next_words(
        &self,
        next: &TbPosition,
        mover: FrameMover,
        c: Color,
        mask: u64,
        mut f: impl FnMut(u64, Symmetry, u64),
    ) {
        let identity = Symmetry::default();
        match mover {
            // The kings stay, off the diagonal: the frame is in normal form as it stands.
            FrameMover::Lone(_) if self.by_squares => f(self.w, identity, mask),
            FrameMover::Man(kind) if self.by_squares => f(
                self.layout.moved_word(self.w, &self.frame, next, c, kind),
                identity,
                mask,
            ),
            _ => {
                let fw = self.layout.frame_word(next);
                for (sym, part) in fw.parts(mask) {
                    if part != 0 {
                        f(fw.word, sym, part);
                    }
                }
            }
        }
    }
}

/// Working values of both halves (None for a half that is not stored).
pub type Work = [Option<Vec<AtomicU16>>; 2];

/// Un-move counters of both halves.
type Counters = [Option<Vec<AtomicU8>>; 2];

/// A metric's values and counters after its init pass, before the waves.
pub struct Start {
    work: Work,
    counters: Counters,
}

impl Start {
    fn alloc(layout: &Layout, pool: Option<&Pool>) -> Start {
        let mut start = Start {
            work: [None, None],
            counters: [None, None],
        };
        // Without a pool, an empty one: its arrays come from the system.
        let fresh = Pool::default();
        let pool = pool.unwrap_or(&fresh);
        for h in Half::BOTH {
            let n = layout.size(h) as usize;
            start.work[h as usize] = Some(pool.values.take(n, || AtomicU16::new(0)));
            start.counters[h as usize] = Some(pool.counts.take(n, || AtomicU8::new(0)));
        }
        start
    }
}

/// An entry's DTZ options from pawn pushes are still to be added (set only by
/// `Solver::init_dtm_dtz`, whose pass runs before the pushes' targets have values).
const PUSHES_PENDING: u16 = 0x4000;

/// In a solve by pawn level (`Solver::run_by_pawn_level`): the entry is not of the level being
/// solved (a higher one, not started, or a lower one, final). Codes stay far below this bit
/// (depths of a few hundred plies).
const OUT_OF_SCOPE: u16 = 0x2000;

/// Win/draw/loss (2/1/0, 3 broken) of every entry, per half.
pub type Wdl = [Option<Vec<u8>>; 2];

pub struct Solver<'a> {
    pub layout: &'a Layout<'a>,
    pub subs: &'a SubTables,
    pub metric: Metric,
    /// In-table win/draw/loss for pawn-move targets (DTZ: plain, DTZ50: under the rule).
    pub pawn_wdl: Option<&'a Wdl>,
    /// Where the layout is one unit of pawn structures (`Layout::of_unit`): the values of the
    /// structures its pawn moves lead to, solved before it. Every pawn move is then a terminal
    /// option, for DTM too, and no un-move of a pawn stays in the unit.
    pub pushes: Option<&'a dyn PushValues>,
    /// Where the arrays come from and go back to, if not the system (`Pool`).
    pool: Option<&'a Pool>,
}

/// The final working codes (without flags) of the positions pawn moves reach from a unit of
/// pawn structures (`Solver::pushes`).
pub trait PushValues: Sync {
    fn code(&self, metric: Metric, succ: &TbPosition) -> u16;
}

const CHUNK: u64 = 1 << 12;

/// Predecessor updates gathered before any is made (see the waves).
const BATCH: usize = 256;
/// In a batch: the source was lost (its predecessors win), else won.
const LOST_SOURCE: u64 = 1 << 63;

/// Which depths occur among the entries of each chunk whose value was fixed or offered by the
/// init pass (bit d of 512, deeper values share bit 511), so that the pass that must pick them
/// up reads only those chunks.
struct DepthMarks {
    bits: Vec<AtomicU64>,
}

impl DepthMarks {
    fn new(size: u64) -> DepthMarks {
        let chunks = size.div_ceil(CHUNK) as usize;
        DepthMarks {
            bits: (0..chunks * 8).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    #[inline(always)]
    fn set(&self, idx: u64, depth: u16) {
        let d = depth.min(511) as usize;
        let w = (idx / CHUNK) as usize * 8 + d / 64;
        if self.bits[w].load(Relaxed) & (1 << (d % 64)) == 0 {
            self.bits[w].fetch_or(1 << (d % 64), Relaxed);
        }
    }

    #[inline(always)]
    fn has(&self, chunk: u64, depth: u16) -> bool {
        let d = depth.min(511) as usize;
        self.bits[chunk as usize * 8 + d / 64].load(Relaxed) & (1 << (d % 64)) != 0
    }
}

/// One bit per entry: the entries resolved at the depth a pass works on. Reading 64 entries per
/// word instead of every value is what keeps a pass's cost proportional to its work.
struct Frontier {
    words: Vec<AtomicU64>,
}

impl Frontier {
    fn new(size: u64) -> Frontier {
        Frontier {
            words: (0..size.div_ceil(64)).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    #[inline(always)]
    fn set(&self, idx: u64) {
        self.words[(idx / 64) as usize].fetch_or(1 << (idx % 64), Relaxed);
    }
}

impl<'a> Solver<'a> {
    pub fn new(
        layout: &'a Layout<'a>,
        subs: &'a SubTables,
        metric: Metric,
        pawn_wdl: Option<&'a Wdl>,
    ) -> Solver<'a> {
        Solver {
            layout,
            subs,
            metric,
            pawn_wdl,
            pushes: None,
            pool: None,
        }
    }

    /// This solver with its arrays taken from `pool`, its counters given back there.
    pub fn with_pool(self, pool: &'a Pool) -> Solver<'a> {
        Solver {
            pool: Some(pool),
            ..self
        }
    }

    /// This solver for a unit of pawn structures whose pawn moves lead to `pushes`.
    pub fn with_pushes(self, pushes: &'a dyn PushValues) -> Solver<'a> {
        Solver {
            pushes: Some(pushes),
            ..self
        }
    }

    #[inline(always)]
    fn slot(work: &Work, half: Half) -> &[AtomicU16] {
        work[half as usize].as_deref().expect("stored half")
    }

    #[inline]
    fn for_each_pred(&self, idx: u64, pos: &TbPosition, f: impl FnMut(Half, u64)) {
        let pawn_moves = self.metric == Metric::Dtm && self.pushes.is_none();
        for_each_pred(self.layout, idx, pos, pawn_moves, f)
    }

    /// The entry of `succ`, a legal successor that stays in this endgame.
    #[inline(always)]
    fn own_entry(&self, succ: &TbPosition) -> (Half, usize) {
        let (h, i) = self
            .layout
            .encode(succ)
            .expect("legal successor has an entry");
        (h, i as usize)
    }

    /// Value for the mover of a terminal move, or None if the move is not terminal for this
    /// metric.
    #[inline]
    fn terminal(
        &self,
        mover: Color,
        class: MoveClass,
        succ: &TbPosition,
        solved: Option<&Work>,
    ) -> Option<u16> {
        match class {
            MoveClass::Quiet => None,
            MoveClass::Pawn if self.pushes.is_some() => {
                let code = self.pushes.map(|p| p.code(self.metric, succ))?;
                Some(match self.metric {
                    Metric::Dtm => backed(code),
                    _ => zeroing(wdl_of_code(code)),
                })
            }
            MoveClass::Pawn => match (solved, self.pawn_wdl) {
                // By pawn level: the push's target, a lower level, is final in `solved`.
                (Some(work), _) => {
                    let (h, i) = self.own_entry(succ);
                    let v = Self::slot(work, h)[i].load(Relaxed);
                    debug_assert!(v & RESOLVED != 0, "a lower pawn level is solved");
                    Some(zeroing(wdl_of_code(v & !(RESOLVED | OUT_OF_SCOPE))))
                }
                (None, None) => None, // DTM: a pawn move stays in the table's own waves
                (None, Some(wdl)) => {
                    let (h, i) = self.own_entry(succ);
                    let w = wdl[h as usize].as_ref().expect("stored half")[i];
                    Some(zeroing(w))
                }
            },
            MoveClass::Convert { captured, promoted } => Some(match self.metric {
                Metric::Dtm => backed(dtm_plies(self.subs.value(
                    Metric::Dtm,
                    mover,
                    captured,
                    promoted,
                    succ,
                ))),
                m => zeroing(wdl_of_result(
                    self.subs.result(mover, captured, promoted, succ),
                    m == Metric::Dtz50,
                )),
            }),
        }
    }

    /// The init pass of this metric alone.
    pub fn init(&self) -> Start {
        let start = self.alloc();
        for &h in &Half::BOTH {
            let vals = Self::slot(&start.work, h);
            let cnt = Self::counts(&start.counters, h);
            self.for_each_entry(h, |idx, pos| {
                let (code, inner) = match pos {
                    None => (RESOLVED | CODE_NONE, 0),
                    Some(pos) => self.init_entry(pos, None),
                };
                vals[idx as usize].store(code, Relaxed);
                cnt[idx as usize].store(inner, Relaxed);
            });
        }
        start
    }

    /// One init pass for DTM (this solver) and DTZ: a move's class and its sub-endgame value
    /// serve both metrics, so the moves are generated once. DTZ's options from pawn pushes
    /// need the table's own win/draw/loss, known only after the DTM solve: such entries are
    /// marked `PUSHES_PENDING`, and the DTZ run settles them first.
    pub fn init_dtm_dtz(&self) -> (Start, Start) {
        debug_assert_eq!(self.metric, Metric::Dtm);
        let (dtm, dtz) = (self.alloc(), self.alloc());
        for &h in &Half::BOTH {
            let (mv, mc) = (Self::slot(&dtm.work, h), Self::counts(&dtm.counters, h));
            let (zv, zc) = (Self::slot(&dtz.work, h), Self::counts(&dtz.counters, h));
            self.for_each_entry(h, |idx, pos| {
                let ((m, mi), (z, zi)) = match pos {
                    None => ((RESOLVED | CODE_NONE, 0), (RESOLVED | CODE_NONE, 0)),
                    Some(pos) => self.init_entry_dtm_dtz(pos),
                };
                let i = idx as usize;
                mv[i].store(m, Relaxed);
                mc[i].store(mi, Relaxed);
                zv[i].store(z, Relaxed);
                zc[i].store(zi, Relaxed);
            });
        }
        (dtm, dtz)
    }

    fn alloc(&self) -> Start {
        Start::alloc(self.layout, self.pool)
    }

    /// Calls `f(idx)` for every entry of half `h`, in parallel chunks.
    fn for_each_index(&self, h: Half, f: impl Fn(u64) + Sync) {
        let size = self.layout.size(h);
        (0..size.div_ceil(CHUNK)).into_par_iter().for_each(|c| {
            for idx in c * CHUNK..((c + 1) * CHUNK).min(size) {
                f(idx);
            }
        });
    }

    /// Calls `f(idx, position or None if broken)` for every entry of half `h`, in parallel.
    fn for_each_entry(&self, h: Half, f: impl Fn(u64, Option<&TbPosition>) + Sync) {
        let size = self.layout.size(h);
        (0..size.div_ceil(CHUNK)).into_par_iter().for_each(|c| {
            self.layout
                .scan(h, c * CHUNK..((c + 1) * CHUNK).min(size), &f);
        });
    }

    /// Adds the pawn-push options of the entries `init_dtm_dtz` left pending (DTZ and DTZ50:
    /// a push zeroes, and is worth the win/draw/loss of the position it reaches).
    fn settle_pushes(&self, start: &Start) {
        let wdl = self.pawn_wdl.expect("pushes are settled for DTZ");
        for &h in &Half::BOTH {
            let vals = Self::slot(&start.work, h);
            let cnt = Self::counts(&start.counters, h);
            self.for_each_index(h, |idx| {
                let v = vals[idx as usize].load(Relaxed);
                if v & PUSHES_PENDING == 0 {
                    return;
                }
                let mut t = v & !PUSHES_PENDING;
                let pos = self.layout.decode_valid(h, idx);
                for_each_pawn_push(&pos, |succ| {
                    let (sh, si) = self.own_entry(succ);
                    let w = wdl[sh as usize].as_ref().expect("stored half")[si];
                    t = better(t, zeroing(w));
                    true
                });
                if cnt[idx as usize].load(Relaxed) == 0 {
                    t |= RESOLVED;
                }
                vals[idx as usize].store(t, Relaxed);
            });
        }
    }

    /// Runs the whole solve, from `start` (or this metric's own init pass);
    /// `on_pass(pass, resolved_so_far)` after the init and each pass.
    pub fn run(&self, start: Option<Start>, on_pass: &(dyn Fn(u32, u64) + Sync)) -> Work {
        let start = match start {
            Some(s) => {
                if self.pawn_wdl.is_some() {
                    self.settle_pushes(&s);
                }
                s
            }
            None => self.init(),
        };
        self.waves(&start, false, on_pass);
        if let Some(p) = self.pool {
            start
                .counters
                .into_iter()
                .flatten()
                .for_each(|c| p.counts.put(c));
        }
        start.work
    }

    /// DTZ50 of an endgame with pawns in one solve. A pawn push zeroes the counter, and its
    /// value is the rule-50 result of the position it reaches, in this same table; pushes only
    /// advance, so the entries are solved one pawn level at a time (`Layout::pawn_level`, the
    /// pawns' steps left to promotion), most advanced first, and every push's target is then
    /// final when its level's init pass reads it. Quiet moves and their un-moves keep the
    /// level, so each level's waves stay inside it.
    pub fn run_by_pawn_level(&self, on_pass: &(dyn Fn(u32, u64) + Sync)) -> Work {
        debug_assert_eq!(self.metric, Metric::Dtz50);
        let start = self.alloc();
        for &h in &Half::BOTH {
            Self::slot(&start.work, h)
                .par_iter()
                .for_each(|a| a.store(OUT_OF_SCOPE, Relaxed));
        }
        for level in 0..=self.layout.max_pawn_level() {
            for &h in &Half::BOTH {
                let vals = Self::slot(&start.work, h);
                let cnt = Self::counts(&start.counters, h);
                self.for_each_index(h, |idx| {
                    // Not started (final entries carry RESOLVED) and of this level.
                    if vals[idx as usize].load(Relaxed) != OUT_OF_SCOPE
                        || self.layout.pawn_level(h, idx) != level
                    {
                        return;
                    }
                    let (code, inner) = match self.layout.decode(h, idx) {
                        None => (RESOLVED | CODE_NONE, 0),
                        Some(pos) => self.init_entry(&pos, Some(&start.work)),
                    };
                    vals[idx as usize].store(code, Relaxed);
                    cnt[idx as usize].store(inner, Relaxed);
                });
            }
            self.waves(&start, true, on_pass);
        }
        for &h in &Half::BOTH {
            Self::slot(&start.work, h).par_iter().for_each(|a| {
                a.fetch_and(!OUT_OF_SCOPE, Relaxed);
            });
        }
        start.work
    }

    /// Seeds and runs the waves from the init values in `start`, then makes every entry left
    /// unresolved a draw. Entries marked `OUT_OF_SCOPE` are left alone; with `by_level`, every
    /// entry is so marked at the end (this level's entries are final).
    fn waves(&self, start: &Start, by_level: bool, on_pass: &(dyn Fn(u32, u64) + Sync)) {
        let halves = &Half::BOTH;
        let (work, counters) = (&start.work, &start.counters);
        let mut marks: [Option<DepthMarks>; 2] = [None, None];
        let mut cur: [Option<Frontier>; 2] = [None, None];
        let mut next: [Option<Frontier>; 2] = [None, None];
        for &h in halves {
            let n = self.layout.size(h);
            marks[h as usize] = Some(DepthMarks::new(n));
            cur[h as usize] = Some(Frontier::new(n));
            next[h as usize] = Some(Frontier::new(n));
        }
        let marks_of = |h: Half| marks[h as usize].as_ref().expect("stored half");
        let resolved = AtomicU64::new(0);
        let max_t = AtomicU64::new(0);
        // Seeds: waves must run at least as deep as any value the init knows; the pass before
        // that depth picks the entry up (mates go straight to pass 0). (The un-move counters
        // are the init's: Thompson 1996, Section 4, warns that they differ from a position's
        // number of moves when positions are their own mirror images. Every position has
        // exactly one entry in the layout, so a counter falls to zero exactly when every
        // non-terminal move leads to a win.)
        for &h in halves {
            let size = self.layout.size(h);
            let vals = Self::slot(work, h);
            let marks = marks_of(h);
            let mates = cur[h as usize].as_ref().expect("stored half");
            (0..size.div_ceil(CHUNK)).into_par_iter().for_each(|c| {
                let mut done = 0u64;
                let mut mt = 0u64;
                for idx in c * CHUNK..((c + 1) * CHUNK).min(size) {
                    let code = vals[idx as usize].load(Relaxed);
                    if code & OUT_OF_SCOPE != 0 {
                        continue;
                    }
                    if code & RESOLVED != 0 {
                        done += 1;
                    }
                    let c = code & !RESOLVED;
                    if c > CODE_DRAW {
                        mt = mt.max(depth(c) as u64);
                        if depth(c) == 0 {
                            mates.set(idx);
                        } else {
                            marks.set(idx, depth(c));
                        }
                    }
                }
                resolved.fetch_add(done, Relaxed);
                max_t.fetch_max(mt, Relaxed);
            });
        }
        on_pass(0, resolved.load(Relaxed));
        let cap = if self.metric == Metric::Dtz50 {
            RULE50_PLIES
        } else {
            u16::MAX / 4
        };
        let mut n: u16 = 0;
        while n < cap {
            let seeds = AtomicU64::new(0);
            let fresh = AtomicU64::new(0);
            for &h in halves {
                let vals = Self::slot(work, h);
                let cnt = Self::counts(counters, h);
                let marks = marks_of(h);
                let now = cur[h as usize].as_ref().expect("stored half");
                let later = next[h as usize].as_ref().expect("stored half");
                let size = self.layout.size(h);
                (0..size.div_ceil(CHUNK)).into_par_iter().for_each(|c| {
                    let mut s = 0u64;
                    let mut done = 0u64;
                    // Entries whose value the init pass fixed or offered at depth n + 1.
                    if marks.has(c, n + 1) {
                        for idx in c * CHUNK..((c + 1) * CHUNK).min(size) {
                            let v = vals[idx as usize].load(Relaxed);
                            let code = v & !RESOLVED;
                            if code <= CODE_DRAW || depth(code) != n + 1 {
                                continue;
                            }
                            if v & RESOLVED != 0 {
                                later.set(idx);
                            } else if (is_win(code) || cnt[idx as usize].load(Relaxed) == 0)
                                && Self::try_resolve(vals, idx, v, v | RESOLVED)
                            {
                                // A pending terminal option reaches its depth: a win now, a
                                // loss if every non-terminal move already leads to a win.
                                later.set(idx);
                                done += 1;
                            }
                        }
                    }
                    // Entries resolved at depth n: their predecessors, in batches. The
                    // predecessors' entries are scattered over the other half; reading all of
                    // a batch's entries before updating any lets the memory system fetch them
                    // at once instead of one miss after another.
                    let ph = Half::of(!h.stm());
                    let pv = Self::slot(work, ph);
                    let pc = Self::counts(counters, ph);
                    let mark = next[ph as usize].as_ref().expect("stored half");
                    let mut batch = [0u64; BATCH];
                    let mut len = 0;
                    let mut flush = |batch: &[u64]| {
                        let mut touched = 0u16;
                        for &e in batch {
                            let pi = (e & !LOST_SOURCE) as usize;
                            touched ^= if e & LOST_SOURCE != 0 {
                                pv[pi].load(Relaxed)
                            } else {
                                pc[pi].load(Relaxed) as u16
                            };
                        }
                        std::hint::black_box(touched);
                        for &e in batch {
                            let pi = e & !LOST_SOURCE;
                            if e & LOST_SOURCE != 0 {
                                // A move to a loss: the predecessor wins in n + 1 (it had
                                // no shorter win, or it would be resolved).
                                let old = pv[pi as usize].load(Relaxed);
                                if old & RESOLVED == 0
                                    && Self::try_resolve(pv, pi, old, RESOLVED | win(n + 1))
                                {
                                    mark.set(pi);
                                    done += 1;
                                }
                                continue;
                            }
                            if pc[pi as usize].fetch_sub(1, Relaxed) != 1 {
                                continue;
                            }
                            // Every non-terminal move now leads to a win, the last one in
                            // n: lost in n + 1 unless a terminal option does better.
                            let old = pv[pi as usize].load(Relaxed);
                            let t = old & !RESOLVED;
                            if old & RESOLVED == 0
                                && (t == CODE_NONE || (is_loss(t) && depth(t) <= n + 1))
                                && Self::try_resolve(pv, pi, old, RESOLVED | loss(n + 1))
                            {
                                mark.set(pi);
                                done += 1;
                            }
                        }
                    };
                    let words = (c * CHUNK / 64) as usize
                        ..((c + 1) * CHUNK).min(size).div_ceil(64) as usize;
                    for w in words {
                        // Most words are empty (a pawn level's waves touch a fraction of the
                        // table): a plain load skips them without a locked exchange.
                        if now.words[w].load(Relaxed) == 0 {
                            continue;
                        }
                        let mut bits = now.words[w].swap(0, Relaxed);
                        while bits != 0 {
                            let idx = w as u64 * 64 + bits.trailing_zeros() as u64;
                            bits &= bits - 1;
                            s += 1;
                            let code = vals[idx as usize].load(Relaxed) & !RESOLVED;
                            let pos = self.layout.decode_valid(h, idx);
                            let lost = if is_loss(code) { LOST_SOURCE } else { 0 };
                            self.for_each_pred(idx, &pos, |qh, pi| {
                                debug_assert_eq!(qh, ph);
                                if len == BATCH {
                                    flush(&batch);
                                    len = 0;
                                }
                                batch[len] = pi | lost;
                                len += 1;
                            });
                            if len >= BATCH / 2 {
                                flush(&batch[..len]);
                                len = 0;
                            }
                        }
                    }
                    flush(&batch[..len]);
                    seeds.fetch_add(s, Relaxed);
                    fresh.fetch_add(done, Relaxed);
                });
            }
            resolved.fetch_add(fresh.load(Relaxed), Relaxed);
            std::mem::swap(&mut cur, &mut next);
            n += 1;
            on_pass(n as u32, resolved.load(Relaxed));
            if fresh.load(Relaxed) == 0
                && seeds.load(Relaxed) == 0
                && n as u64 > max_t.load(Relaxed)
            {
                break;
            }
        }
        // What is left cannot be forced either way: a draw (for DTZ50, also every result that
        // needs more than 100 plies).
        // With `by_level` this level's entries are final: no later level takes them in again.
        let done = if by_level { OUT_OF_SCOPE } else { 0 };
        for &h in halves {
            Self::slot(work, h).par_iter().for_each(|a| {
                let v = a.load(Relaxed);
                if v & OUT_OF_SCOPE == 0 {
                    let v = if v & RESOLVED == 0 {
                        RESOLVED | CODE_DRAW
                    } else {
                        v
                    };
                    a.store(v | done, Relaxed);
                }
            });
        }
    }

    #[inline(always)]
    fn counts(counters: &Counters, h: Half) -> &[AtomicU8] {
        counters[h as usize].as_deref().expect("stored half")
    }

    #[inline(always)]
    fn try_resolve(vals: &[AtomicU16], idx: u64, old: u16, new: u16) -> bool {
        vals[idx as usize]
            .compare_exchange(old, new, Relaxed, Relaxed)
            .is_ok()
    }

    /// Is `dtz`, a final DTZ solve with no depth beyond 100 plies, also DTZ50? The two
    /// solves differ only where a capture or promotion reaches a sub-endgame position whose
    /// result the rule changes. Every entry with such a move is valued again from its
    /// successors: the sub-endgames' DTZ50 results, and `dtz` itself for the moves that stay
    /// (pushes included). If each keeps its DTZ value, `dtz` satisfies DTZ50's equations at
    /// every entry, and a valuation consistent with its depths is unique (by induction on the
    /// depth, as the verifier's own argument), so it is DTZ50. Returns how many entries were
    /// valued again, or None as soon as one changes. `self.metric` is DTZ50.
    pub fn dtz_holds_under_rule50(&self, dtz: &Work) -> Option<u64> {
        debug_assert_eq!(self.metric, Metric::Dtz50);
        let changed = AtomicBool::new(false);
        let checked = AtomicU64::new(0);
        for &h in &Half::BOTH {
            let vals = Self::slot(dtz, h);
            let mover = h.stm();
            // When only promotions can reach a changed result, only entries with a pawn of the
            // mover's about to promote need their moves made.
            let promotions_only = !self.subs.rule50_bites_without_promotion(mover);
            let seventh = Bitboard::rank(if mover == Color::White { 6 } else { 1 });
            self.for_each_index(h, |idx| {
                // The rule only turns a conversion's win (in 1 ply, as zeroing moves count)
                // or loss into a draw. A draw or a deeper win has no conversion that wins, so
                // its best option stays; a win in 1 may lose its only winning move, a loss may
                // gain a drawing one.
                let v = vals[idx as usize].load(Relaxed) & !RESOLVED;
                if !(v == win(1) || is_loss(v)) || changed.load(Relaxed) {
                    return;
                }
                let pos = self.layout.decode_valid(h, idx);
                if promotions_only
                    && (pos.pieces[mover.index()][PieceType::Pawn.index()] & seventh).is_empty()
                {
                    return;
                }
                let tainted = !for_each_conversion(&pos, &Legality::of(&pos), |succ, class| {
                    let MoveClass::Convert { captured, promoted } = class else {
                        return true;
                    };
                    !self.subs.rule50_bites(mover, captured, promoted)
                        || !self.subs.rule50_changes(mover, captured, promoted, succ)
                });
                if !tainted {
                    return;
                }
                checked.fetch_add(1, Relaxed);
                let code = |succ: &TbPosition| {
                    let (sh, si) = self.own_entry(succ);
                    Self::slot(dtz, sh)[si].load(Relaxed) & !RESOLVED
                };
                let mut best = CODE_NONE;
                for_each_move(&pos, |succ, class| {
                    let o = match class {
                        MoveClass::Quiet => backed(code(succ)),
                        MoveClass::Pawn => zeroing(wdl_of_code(match self.pushes {
                            Some(p) => p.code(Metric::Dtz50, succ),
                            None => code(succ),
                        })),
                        MoveClass::Convert { captured, promoted } => zeroing(wdl_of_result(
                            self.subs.result(mover, captured, promoted, succ),
                            true,
                        )),
                    };
                    best = better(best, o);
                    true
                });
                if best != v {
                    changed.store(true, Relaxed);
                }
            });
        }
        (!changed.into_inner()).then(|| checked.into_inner())
    }

    /// The initial code of an entry: final for broken entries, mates, stalemates and positions
    /// with only terminal moves; otherwise the best terminal option, not final.
    /// Also returns how many times un-moves from the entries of its non-terminal successors
    /// will reach this entry: by orbit counting, the sum over those moves of the successor's
    /// stabiliser, divided by the position's own (1 unless a position is its own mirror image).
    fn init_entry(&self, pos: &TbPosition, solved: Option<&Work>) -> (u16, u8) {
        if !self.layout.no_symmetric_neighbours(pos) {
            return self.init_entry_by_moves(pos, solved);
        }
        // Every in-table successor is reached once: the quiet moves are counted, not made.
        let mover = pos.stm;
        let mut t = CODE_NONE;
        let mut any = false;
        let legal = Legality::of(pos);
        for_each_conversion(pos, &legal, |succ, class| {
            any = true;
            if let Some(o) = self.terminal(mover, class, succ, solved) {
                t = better(t, o);
            }
            true
        });
        let n = count_inner_moves(pos, &legal);
        let mut inner = n.quiet;
        if solved.is_none() && self.pawn_wdl.is_none() && self.pushes.is_none() {
            inner += n.pushes; // DTM: pushes stay in the table's own waves
        } else if n.pushes > 0 {
            for_each_pawn_push(pos, |succ| {
                if let Some(o) = self.terminal(mover, MoveClass::Pawn, succ, solved) {
                    t = better(t, o);
                }
                true
            });
        }
        Self::start_code(pos, any || n.quiet + n.pushes > 0, t, inner)
    }

    /// The init code of an entry whose best terminal option is `t` and whose `inner` moves
    /// stay in the table (`any`: it has a legal move at all).
    #[inline(always)]
    fn start_code(pos: &TbPosition, any: bool, t: u16, inner: u32) -> (u16, u8) {
        if !any {
            let v = if in_check(pos) { loss(0) } else { CODE_DRAW };
            return (RESOLVED | v, 0);
        }
        let inner =
            u8::try_from(inner).expect("un-move counter fits a byte (at most 2 x 90 arrivals)");
        if inner == 0 {
            return (RESOLVED | t, 0);
        }
        (t, inner)
    }

    /// `init_entry` by making every move: for positions near a long diagonal, where a
    /// successor may be its own mirror image and be reached twice by un-moves.
    fn init_entry_by_moves(&self, pos: &TbPosition, solved: Option<&Work>) -> (u16, u8) {
        let mover = pos.stm;
        let mut t = CODE_NONE;
        let mut any = false;
        // Counted wide: five men have at most about 90 moves, each reached at most twice.
        let mut inner = 0u32;
        for_each_move(pos, |succ, class| {
            any = true;
            match self.terminal(mover, class, succ, solved) {
                Some(o) => t = better(t, o),
                None => inner += self.layout.stabiliser(succ) as u32,
            }
            true
        });
        let own = self.layout.stabiliser(pos) as u32;
        debug_assert_eq!(inner % own, 0);
        Self::start_code(pos, any, t, inner / own)
    }

    /// `init_entry` for DTM and DTZ at once (see `init_dtm_dtz`). A capture or promotion's
    /// DTZ option is the win/draw/loss of its DTM value: the two metrics differ in depth only.
    fn init_entry_dtm_dtz(&self, pos: &TbPosition) -> ((u16, u8), (u16, u8)) {
        let mover = pos.stm;
        let (mut tm, mut tz) = (CODE_NONE, CODE_NONE);
        let mut any = false;
        let mut conversion = |class: MoveClass, succ: &TbPosition| {
            any = true;
            if let MoveClass::Convert { captured, promoted } = class {
                let v = self
                    .subs
                    .value(Metric::Dtm, mover, captured, promoted, succ);
                tm = better(tm, backed(dtm_plies(v)));
                tz = better(tz, zeroing(wdl_of(v)));
            }
        };
        let (inner_m, inner_z, pushes) = if self.layout.no_symmetric_neighbours(pos) {
            let legal = Legality::of(pos);
            for_each_conversion(pos, &legal, |succ, class| {
                conversion(class, succ);
                true
            });
            let n = count_inner_moves(pos, &legal);
            any |= n.quiet + n.pushes > 0;
            match self.pushes {
                // A unit of pawn structures: the pushes' targets are solved, terminal for both.
                Some(p) if n.pushes > 0 => {
                    for_each_pawn_push(pos, |succ| {
                        let c = p.code(Metric::Dtm, succ);
                        tm = better(tm, backed(c));
                        tz = better(tz, zeroing(wdl_of_code(c)));
                        true
                    });
                    (n.quiet, n.quiet, false)
                }
                Some(_) => (n.quiet, n.quiet, false),
                None => (n.quiet + n.pushes, n.quiet, n.pushes > 0),
            }
        } else {
            // Near a long diagonal a successor may be its own mirror image (see `init_entry`).
            let (mut inner_m, mut inner_z, mut pushes) = (0u32, 0u32, false);
            for_each_move(pos, |succ, class| {
                match class {
                    MoveClass::Quiet => {
                        let s = self.layout.stabiliser(succ) as u32;
                        inner_m += s;
                        inner_z += s;
                    }
                    MoveClass::Pawn => {
                        inner_m += self.layout.stabiliser(succ) as u32;
                        pushes = true;
                    }
                    MoveClass::Convert { .. } => {}
                }
                conversion(class, succ);
                true
            });
            let own = self.layout.stabiliser(pos) as u32;
            debug_assert_eq!(inner_m % own, 0);
            debug_assert_eq!(inner_z % own, 0);
            (inner_m / own, inner_z / own, pushes)
        };
        let m = Self::start_code(pos, any, tm, inner_m);
        let z = Self::start_code(pos, any, tz, inner_z);
        // DTZ's pushes are options of their own, added once DTM's result gives their value.
        let z = if pushes {
            ((z.0 & !RESOLVED) | PUSHES_PENDING, z.1)
        } else {
            z
        };
        (m, z)
    }
}

/// Win/draw/loss (2/1/0, 3 none) of a working code without its flags.
#[inline(always)]
pub(super) fn wdl_of_code(c: u16) -> u8 {
    match c {
        CODE_NONE => 3,
        CODE_DRAW => 1,
        c if is_win(c) => 2,
        _ => 0,
    }
}

/// The deepest win or loss of final values `work`, in plies.
pub fn max_depth(work: &Work) -> u16 {
    work.iter()
        .flatten()
        .map(|v| {
            v.par_iter()
                .map(|a| match a.load(Relaxed) & !RESOLVED {
                    c if c > CODE_DRAW => depth(c),
                    _ => 0,
                })
                .max()
                .unwrap_or(0)
        })
        .max()
        .unwrap_or(0)
}

/// DTZ values as DTZ50 where the rule only stops the count: results deeper than 100 plies
/// become draws (see `build_endgame`).
pub fn capped_at_rule50(dtz: &Work) -> Work {
    dtz.each_ref().map(|v| {
        v.as_ref().map(|v| {
            v.par_iter()
                .map(|a| {
                    let code = a.load(Relaxed);
                    AtomicU16::new(code & RESOLVED | plies::capped_at_rule50(code & !RESOLVED))
                })
                .collect()
        })
    })
}

/// A DTZ file value (plies) as DTZ50 where the rule only stops the count: deeper results drawn.
pub fn capped_at_rule50_value(v: TbValue) -> TbValue {
    TbValue::from_raw(plies::capped_at_rule50(v.raw()))
}

/// Win/draw/loss of final working values.
pub fn wdl_of_work(work: &Work) -> Wdl {
    [0, 1].map(|h| {
        work[h].as_ref().map(|v| {
            v.par_iter()
                .map(|a| wdl_of_code(a.load(Relaxed) & !RESOLVED))
                .collect()
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::egtb::generate::moves::{for_each_frame_capture, for_each_quiet};
    use crate::egtb::generate::{gentb, open_subs, GenOptions};
    use crate::egtb::index::EndgameIndex;
    use crate::egtb::Material;

    /// The words the frame tests walk: every word of both halves of KQKB, KRKN and KNKQ, every
    /// 29th of KQRKB and KBNKR; `f(name, layout, h, w, valid, bits)` with the word's valid
    /// entries (decoded one by one), once for all of them and once for a pseudo-random part, where
    /// the lone man blocks and checks in every way.
    fn for_each_test_word(mut f: impl FnMut(&str, &Layout, Half, u64, u64, u64)) {
        for (name, step) in [
            ("KQKB", 1),
            ("KRKN", 1),
            ("KNKQ", 1),
            ("KQRKB", 29),
            ("KBNKR", 29),
        ] {
            let m = Material::parse(name).unwrap();
            let index = EndgameIndex::new(&m);
            let layout = Layout::new(&index);
            assert!(layout.lone_last_man().is_some(), "{name}");
            for h in Half::BOTH {
                for w in (0..layout.size(h) / 64).step_by(step) {
                    let valid = (0..64)
                        .filter(|&s| layout.decode(h, w * 64 + s).is_some())
                        .fold(0u64, |b, s| b | 1 << s);
                    let some =
                        valid & (w.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5555_5555_5555_5555);
                    for bits in [valid, some] {
                        f(name, &layout, h, w, valid, bits);
                    }
                }
            }
        }
    }

    /// A word's predecessors found frame by frame are those found entry by entry, as many
    /// times, on the words of `for_each_test_word`.
    #[test]
    fn predecessors_by_word_equal_those_by_entry() {
        // Per endgame: words compared, and of them those whose kings both stand on the long
        // diagonal.
        let mut tally = std::collections::BTreeMap::<String, (u64, u64)>::new();
        for_each_test_word(|name, layout, h, w, _, bits| {
            let (compared, diagonal) = tally.entry(name.to_string()).or_default();
            let mut word = Vec::new();
            assert!(
                for_each_pred_word(layout, h, w, bits, |ph, pw, mask| {
                    for s in Bitboard(mask) {
                        word.push((ph as u8, pw * 64 + s.0 as u64));
                    }
                }),
                "{name}: a lone last man"
            );
            let mut entry = Vec::new();
            for s in Bitboard(bits) {
                let idx = w * 64 + s.0 as u64;
                let pos = layout.decode_valid(h, idx);
                for_each_pred(layout, idx, &pos, false, |ph, pi| {
                    entry.push((ph as u8, pi))
                });
            }
            word.sort_unstable();
            entry.sort_unstable();
            assert_eq!(word, entry, "{name} {h:?} word {w}");
            *compared += 1;
            if bits != 0 && !layout.unmoves_by_squares(w * 64, &layout.frame(h, w)) {
                *diagonal += 1;
            }
        });
        assert_eq!(tally.len(), 5);
        for (name, (compared, diagonal)) in tally {
            assert!(
                diagonal > 0,
                "{name}: {compared} words, none on the diagonal"
            );
        }
    }

    /// A word's quiet successors found frame by frame are those found entry by entry, as many
    /// times, entry by entry, on the words of `for_each_test_word`, each with its stabiliser;
    /// so are its valid entries, each entry's stabiliser and its number of captures. Words
    /// with both kings on the diagonal and mirrored positions are among those compared.
    #[test]
    fn successors_by_word_equal_those_by_entry() {
        // Per endgame: diagonal words compared (both kings on the long diagonal), successors
        // that are their own mirror image, and entries that are.
        let mut tally = std::collections::BTreeMap::<String, [u64; 3]>::new();
        for_each_test_word(|name, layout, h, w, valid, bits| {
            let counts = tally.entry(name.to_string()).or_default();
            assert_eq!(
                layout.valid_in_word(h, w),
                Some(valid),
                "{name} {h:?} word {w}"
            );
            let lone = layout.lone_last_man().unwrap();
            if bits != 0 {
                let mut captures = [0u32; 64];
                for_each_frame_capture(&layout.frame(h, w), lone, bits, |mask| {
                    for s in Bitboard(mask) {
                        captures[s.index()] += 1;
                    }
                });
                for s in Bitboard(bits) {
                    let pos = layout.decode_valid(h, w * 64 + s.0 as u64);
                    let mut n = 0;
                    for_each_conversion(&pos, &Legality::of(&pos), |_, _| {
                        n += 1;
                        true
                    });
                    assert_eq!(captures[s.index()], n, "{name} {h:?} word {w} {s:?}");
                }
                if !layout.unmoves_by_squares(w * 64, &layout.frame(h, w)) {
                    counts[0] += 1;
                }
            }
            // Each successor's entry and stabiliser, per entry of the word.
            let mut word = vec![Vec::new(); 64];
            let own_mirrored = for_each_succ_word(layout, h, w, bits, |sw, sym, at, mask, m| {
                assert_eq!(m & !mask, 0);
                for s in Bitboard(mask) {
                    let entry = sw * 64 + sym.square(s).0 as u64;
                    word[at.unwrap_or(s).index()].push((entry, 1 + (m >> s.0 & 1) as u8));
                }
            })
            .expect("a lone last man");
            for s in Bitboard(bits) {
                let idx = w * 64 + s.0 as u64;
                let pos = layout.decode_valid(h, idx);
                assert_eq!(
                    1 + (own_mirrored >> s.0 & 1) as u8,
                    layout.stabiliser(&pos),
                    "{name} {h:?} entry {idx}"
                );
                counts[2] += own_mirrored >> s.0 & 1;
                let mut entry = Vec::new();
                for_each_quiet(&pos, |succ, _| {
                    entry.push((layout.encode(succ).unwrap().1, layout.stabiliser(succ)));
                    true
                });
                counts[1] += entry.iter().filter(|&&(_, st)| st == 2).count() as u64;
                entry.sort_unstable();
                word[s.index()].sort_unstable();
                assert_eq!(word[s.index()], entry, "{name} {h:?} entry {idx}");
            }
        });
        assert_eq!(tally.len(), 5);
        for (name, [diagonal, mirrored_successors, mirrored]) in tally {
            assert!(
                diagonal > 0 && mirrored_successors > 0 && mirrored > 0,
                "{name}: {diagonal} diagonal words, {mirrored_successors} mirrored successors, {mirrored} mirrored entries"
            );
        }
    }

    /// Every entry's (value, counter), per half.
    fn values(s: &Start) -> Vec<Option<Vec<(u16, u8)>>> {
        (0..2)
            .map(|h| {
                let (w, c) = (s.work[h].as_ref()?, s.counters[h].as_ref()?);
                Some(
                    w.iter()
                        .zip(c)
                        .map(|(a, n)| (a.load(Relaxed), n.load(Relaxed)))
                        .collect(),
                )
            })
            .collect()
    }

    fn same(a: &Start, b: &Start) -> bool {
        values(a) == values(b)
    }

    /// The shared DTM + DTZ init pass (with the pawn pushes settled after the DTM solve)
    /// starts both solves exactly where their own init passes would.
    #[test]
    fn shared_init_equals_separate_inits() {
        let dir = tempfile::tempdir().unwrap();
        let opts = GenOptions {
            verify: false,
            ..GenOptions::new(dir.path())
        };
        for name in ["KPK", "KBNK"] {
            let m = Material::parse(name).unwrap();
            let subs: Vec<Material> = m
                .sub_endgames()
                .into_iter()
                .filter(|s| s.men() > 2)
                .collect();
            gentb(&subs, &opts, &mut |_| {}).unwrap();
            let subs = SubTables::new(&m, open_subs(std::iter::once(dir.path()), &m).unwrap());
            let index = EndgameIndex::new(&m);
            let layout = Layout::new(&index);
            let dtm = Solver::new(&layout, &subs, Metric::Dtm, None);
            let (dtm_start, dtz_start) = dtm.init_dtm_dtz();
            assert!(same(&dtm_start, &dtm.init()), "{name} DTM");
            let wdl = wdl_of_work(&dtm.run(Some(dtm_start), &|_, _| {}));
            let dtz = Solver::new(&layout, &subs, Metric::Dtz, Some(&wdl));
            dtz.settle_pushes(&dtz_start);
            assert!(same(&dtz_start, &dtz.init()), "{name} DTZ");
        }
    }
}
