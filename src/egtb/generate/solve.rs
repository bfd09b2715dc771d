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

use super::moves::{for_each_move, for_each_unmove, in_check, MoveClass, NONE};
use crate::chess::{Color, PieceType};
use crate::egtb::file::{Metric, Outcome, TbValue};
use crate::egtb::index::{EndgameIndex, Half, Symmetry, TbPosition};
use crate::egtb::tables::EndgameTables;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU16, AtomicU64, Ordering::Relaxed};

// ------------------------------------------------------------------------------------------
// Working values: the `TbValue` encoding counted in plies (0 none/broken, 1 draw, 2n win in n,
// 2n + 3 loss in n), plus a flag for "final".

pub const RESOLVED: u16 = 0x8000;
pub const CODE_NONE: u16 = 0;
pub const CODE_DRAW: u16 = 1;

#[inline(always)]
pub fn win(n: u16) -> u16 {
    2 * n
}
#[inline(always)]
pub fn loss(n: u16) -> u16 {
    2 * n + 3
}
#[inline(always)]
fn is_win(c: u16) -> bool {
    c >= 2 && c % 2 == 0
}
#[inline(always)]
fn is_loss(c: u16) -> bool {
    c >= 3 && c % 2 == 1
}
/// Depth in plies of a win or loss code.
#[inline(always)]
fn depth(c: u16) -> u16 {
    if c % 2 == 0 {
        c / 2
    } else {
        (c - 3) / 2
    }
}

/// Order of preference for the side choosing: short wins, long wins, draws, long losses, short
/// losses; "no option" below everything.
#[inline(always)]
pub fn preference(c: u16) -> i32 {
    match c {
        CODE_NONE => i32::MIN,
        CODE_DRAW => 0,
        c if c % 2 == 0 => 40_000 - (c / 2) as i32,
        c => -40_000 + ((c - 3) / 2) as i32,
    }
}

#[inline(always)]
pub fn better(a: u16, b: u16) -> u16 {
    if preference(b) > preference(a) {
        b
    } else {
        a
    }
}

/// The value for the mover of a move to a position worth `c` to its side to move.
#[inline(always)]
pub fn backed(c: u16) -> u16 {
    match c {
        CODE_NONE | CODE_DRAW => c,
        c if c % 2 == 0 => loss(c / 2 + 1),
        c => win((c - 3) / 2 + 1),
    }
}

/// The value for the mover of a zeroing move to a position whose side to move wins (2), draws
/// (1) or loses (0): the count stops at the zeroing move.
#[inline(always)]
pub fn zeroing(wdl: u8) -> u16 {
    match wdl {
        2 => loss(1),
        0 => win(1),
        _ => CODE_DRAW,
    }
}

/// A file value (DTM in moves) as a code in plies.
#[inline(always)]
pub fn dtm_plies(v: TbValue) -> u16 {
    match v.outcome() {
        Outcome::Broken => CODE_NONE,
        Outcome::Draw => CODE_DRAW,
        Outcome::Win(k) => win(2 * k - 1),
        Outcome::Loss(k) => loss(2 * k),
    }
}

/// Win/draw/loss of a value: 2, 1, 0; 3 for broken.
#[inline(always)]
pub fn wdl_of(v: TbValue) -> u8 {
    match v.outcome() {
        Outcome::Win(_) => 2,
        Outcome::Draw => 1,
        Outcome::Loss(_) => 0,
        Outcome::Broken => 3,
    }
}

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
}

const KINGS_ONLY: u8 = 254;
const IMPOSSIBLE: u8 = 255;

impl SubTables {
    /// `tables` must hold every sub-endgame of `material` (except bare kings).
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
        SubTables { tables, slot }
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
        match self.slot[mover.index()][captured as usize][promoted as usize] {
            KINGS_ONLY => TbValue::DRAW,
            IMPOSSIBLE => panic!("sub-endgame table missing for a legal move (checked on load)"),
            s => {
                let t = &self.tables[s as usize];
                // A legal position reached by a legal move is always indexable (the index
                // round-trip tests cover every legal 3-4 man position).
                let (half, idx) = t.entry(succ).expect("legal successor has an index");
                t.value(metric, half, idx).expect("index within the file")
            }
        }
    }
}

// ------------------------------------------------------------------------------------------
// The solver.

/// Working values of both halves (None for a half that is not stored).
pub type Work = [Option<Vec<AtomicU16>>; 2];

/// Win/draw/loss (2/1/0, 3 broken) of every entry, per half.
pub type Wdl = [Option<Vec<u8>>; 2];

pub struct Solver<'a> {
    pub index: &'a EndgameIndex,
    pub subs: &'a SubTables,
    pub metric: Metric,
    /// In-table win/draw/loss for pawn-move targets (DTZ: plain, DTZ50: under the rule).
    pub pawn_wdl: Option<&'a Wdl>,
    /// Pawnless endgames: both kings on a long diagonal gives two entries per position.
    pawnless: bool,
}

const CHUNK: u64 = 1 << 14;

/// The eight symmetries of the board (`Symmetry::group(false)` without its allocation).
const SYMMETRIES: [Symmetry; 8] = {
    let mut out = [Symmetry {
        mirror_files: false,
        mirror_ranks: false,
        transpose: false,
    }; 8];
    let mut i = 0;
    while i < 8 {
        out[i] = Symmetry {
            mirror_files: i & 1 != 0,
            mirror_ranks: i & 2 != 0,
            transpose: i & 4 != 0,
        };
        i += 1;
    }
    out
};

/// Number of plies within which DTZ50 must zero.
pub const RULE50_PLIES: u16 = 100;

impl<'a> Solver<'a> {
    pub fn new(
        index: &'a EndgameIndex,
        subs: &'a SubTables,
        metric: Metric,
        pawn_wdl: Option<&'a Wdl>,
    ) -> Solver<'a> {
        Solver {
            index,
            subs,
            metric,
            pawn_wdl,
            pawnless: !index.material().has_pawns(),
        }
    }

    #[inline(always)]
    fn slot<'w>(work: &'w Work, half: Half) -> &'w [AtomicU16] {
        work[half as usize].as_deref().expect("stored half")
    }

    /// Calls `f` with every entry of the positions equal to `pos` up to symmetry (one, or two
    /// when both kings stand on a long diagonal of a pawnless board).
    #[inline]
    fn for_each_entry(&self, pos: &TbPosition, mut f: impl FnMut(Half, u64)) {
        let Some((h, i)) = self.index.index(pos) else {
            return;
        };
        f(h, i);
        if self.pawnless {
            let (a, b) = (pos.king(Color::White), pos.king(Color::Black));
            let diag = |s: crate::chess::Square| s.file() == s.rank();
            let anti = |s: crate::chess::Square| s.file() + s.rank() == 7;
            if (diag(a) && diag(b)) || (anti(a) && anti(b)) {
                for sym in SYMMETRIES {
                    if let Some((h2, i2)) = self.index.index(&pos.transformed(sym)) {
                        if (h2, i2) != (h, i) {
                            f(h2, i2);
                        }
                    }
                }
            }
        }
    }

    /// Value for the mover of a terminal move, or None if the move is not terminal for this
    /// metric.
    #[inline]
    fn terminal(&self, mover: Color, class: MoveClass, succ: &TbPosition) -> Option<u16> {
        match class {
            MoveClass::Quiet => None,
            MoveClass::Pawn => match self.pawn_wdl {
                None => None, // DTM: a pawn move stays in the table's own waves
                Some(wdl) => {
                    let (h, i) = self
                        .index
                        .index(succ)
                        .expect("legal successor has an index");
                    let w = wdl[h as usize].as_ref().expect("stored half")[i as usize];
                    Some(zeroing(w))
                }
            },
            MoveClass::Convert { captured, promoted } => {
                let v = self
                    .subs
                    .value(self.metric, mover, captured, promoted, succ);
                Some(match self.metric {
                    Metric::Dtm => backed(dtm_plies(v)),
                    _ => zeroing(wdl_of(v)),
                })
            }
        }
    }

    /// Runs the whole solve; `on_pass(pass, resolved_so_far)` after the init and each pass.
    pub fn run(&self, on_pass: &(dyn Fn(u32, u64) + Sync)) -> Work {
        let halves = self.index.stored_halves();
        let mut work: Work = [None, None];
        for &h in halves {
            let n = self.index.size(h) as usize;
            work[h as usize] = Some((0..n).map(|_| AtomicU16::new(0)).collect());
        }
        let resolved = AtomicU64::new(0);
        let max_t = AtomicU64::new(0);
        // Init: terminal options, mates, stalemates.
        for &h in halves {
            let size = self.index.size(h);
            let vals = Self::slot(&work, h);
            (0..size.div_ceil(CHUNK)).into_par_iter().for_each(|c| {
                let mut done = 0u64;
                let mut mt = 0u64;
                for idx in c * CHUNK..((c + 1) * CHUNK).min(size) {
                    let code = self.init_entry(h, idx);
                    if code & RESOLVED != 0 {
                        done += 1;
                    }
                    // Waves must run at least as deep as any value known now.
                    let c = code & !RESOLVED;
                    if c > CODE_DRAW {
                        mt = mt.max(depth(c) as u64);
                    }
                    vals[idx as usize].store(code, Relaxed);
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
        let cands: [Option<Vec<AtomicU64>>; 2] = [0, 1].map(|h| {
            work[h].as_ref().map(|v| {
                (0..v.len().div_ceil(64))
                    .map(|_| AtomicU64::new(0))
                    .collect()
            })
        });
        let mut n: u16 = 0;
        loop {
            if n >= cap {
                break;
            }
            let before = resolved.load(Relaxed);
            // Phase A: un-move from the entries resolved at depth n.
            let seeds = AtomicU64::new(0);
            for &h in halves {
                let size = self.index.size(h);
                let vals = Self::slot(&work, h);
                (0..size.div_ceil(CHUNK)).into_par_iter().for_each(|c| {
                    let mut s = 0u64;
                    let mut done = 0u64;
                    for idx in c * CHUNK..((c + 1) * CHUNK).min(size) {
                        let v = vals[idx as usize].load(Relaxed);
                        let code = v & !RESOLVED;
                        if code == CODE_NONE || code == CODE_DRAW || depth(code) != n {
                            if v & RESOLVED == 0 && code > CODE_DRAW && depth(code) == n + 1 {
                                // A pending terminal option reaches its depth.
                                if is_win(code) {
                                    if Self::try_resolve(vals, idx, v, v | RESOLVED) {
                                        done += 1;
                                    }
                                } else {
                                    Self::mark(&cands, h, idx);
                                }
                            }
                            continue;
                        }
                        if v & RESOLVED == 0 {
                            continue;
                        }
                        s += 1;
                        let pos = self.index.decode(h, idx).expect("resolved entry decodes");
                        let pawn_moves = self.metric == Metric::Dtm;
                        let lost = is_loss(code);
                        for_each_unmove(&pos, pawn_moves, |pred| {
                            self.for_each_entry(pred, |ph, pi| {
                                if lost {
                                    let pv = Self::slot(&work, ph);
                                    let old = pv[pi as usize].load(Relaxed);
                                    if old & RESOLVED == 0
                                        && Self::try_resolve(pv, pi, old, RESOLVED | win(n + 1))
                                    {
                                        done += 1;
                                    }
                                } else {
                                    Self::mark(&cands, ph, pi);
                                }
                            });
                        });
                    }
                    seeds.fetch_add(s, Relaxed);
                    resolved.fetch_add(done, Relaxed);
                });
            }
            // Phase B: candidates that may now be lost in n + 1.
            for &h in halves {
                let bits = cands[h as usize].as_ref().expect("stored half");
                let vals = Self::slot(&work, h);
                let words = bits.len() as u64;
                (0..words.div_ceil(256)).into_par_iter().for_each(|c| {
                    let mut done = 0u64;
                    for w in c * 256..((c + 1) * 256).min(words) {
                        let mut b = bits[w as usize].swap(0, Relaxed);
                        while b != 0 {
                            let idx = w * 64 + b.trailing_zeros() as u64;
                            b &= b - 1;
                            let v = vals[idx as usize].load(Relaxed);
                            if v & RESOLVED != 0 {
                                continue;
                            }
                            if let Some(l) = self.check_loss(&work, h, idx, v, n + 1) {
                                if Self::try_resolve(vals, idx, v, RESOLVED | l) {
                                    done += 1;
                                }
                            }
                        }
                    }
                    resolved.fetch_add(done, Relaxed);
                });
            }
            n += 1;
            on_pass(n as u32, resolved.load(Relaxed));
            let new = resolved.load(Relaxed) - before;
            if new == 0 && seeds.load(Relaxed) == 0 && n as u64 > max_t.load(Relaxed) {
                break;
            }
        }
        // What is left cannot be forced either way: a draw (for DTZ50, also every result that
        // needs more than 100 plies).
        for &h in halves {
            Self::slot(&work, h).par_iter().for_each(|a| {
                let v = a.load(Relaxed);
                if v & RESOLVED == 0 {
                    a.store(RESOLVED | CODE_DRAW, Relaxed);
                }
            });
        }
        work
    }

    #[inline(always)]
    fn mark(cands: &[Option<Vec<AtomicU64>>; 2], h: Half, idx: u64) {
        let bits = cands[h as usize].as_ref().expect("stored half");
        bits[(idx / 64) as usize].fetch_or(1 << (idx % 64), Relaxed);
    }

    #[inline(always)]
    fn try_resolve(vals: &[AtomicU16], idx: u64, old: u16, new: u16) -> bool {
        vals[idx as usize]
            .compare_exchange(old, new, Relaxed, Relaxed)
            .is_ok()
    }

    /// The initial code of an entry: final for broken entries, mates, stalemates and positions
    /// with only terminal moves; otherwise the best terminal option, not final.
    fn init_entry(&self, h: Half, idx: u64) -> u16 {
        let Some(pos) = self.index.decode(h, idx) else {
            return RESOLVED | CODE_NONE;
        };
        let mover = pos.stm;
        let mut t = CODE_NONE;
        let mut any = false;
        let mut inner = false;
        for_each_move(&pos, |succ, class| {
            any = true;
            match self.terminal(mover, class, succ) {
                Some(o) => t = better(t, o),
                None => inner = true,
            }
            true
        });
        if !any {
            return RESOLVED | if in_check(&pos) { loss(0) } else { CODE_DRAW };
        }
        if !inner {
            return RESOLVED | t;
        }
        t
    }

    /// If every non-terminal move of the entry leads to a resolved win for the opponent and the
    /// longest resistance (with the terminal option `t`) is exactly `target` plies, the loss.
    fn check_loss(&self, work: &Work, h: Half, idx: u64, t: u16, target: u16) -> Option<u16> {
        if t != CODE_NONE && !is_loss(t) {
            return None;
        }
        let mut longest = if t == CODE_NONE { 0 } else { depth(t) };
        let pos = self.index.decode(h, idx)?;
        let dtm = self.metric == Metric::Dtm;
        let ok = for_each_move(&pos, |succ, class| {
            let inner = match class {
                MoveClass::Quiet => true,
                MoveClass::Pawn => dtm,
                MoveClass::Convert { .. } => false,
            };
            if !inner {
                return true;
            }
            let (sh, si) = self
                .index
                .index(succ)
                .expect("legal successor has an index");
            let v = Self::slot(work, sh)[si as usize].load(Relaxed);
            if v & RESOLVED == 0 || !is_win(v & !RESOLVED) {
                return false;
            }
            longest = longest.max(depth(v & !RESOLVED) + 1);
            true
        });
        (ok && longest == target).then(|| loss(target))
    }
}

/// Win/draw/loss of final working values.
pub fn wdl_of_work(work: &Work) -> Wdl {
    [0, 1].map(|h| {
        work[h].as_ref().map(|v| {
            v.par_iter()
                .map(|a| {
                    let c = a.load(Relaxed) & !RESOLVED;
                    match c {
                        CODE_NONE => 3,
                        CODE_DRAW => 1,
                        c if is_win(c) => 2,
                        _ => 0,
                    }
                })
                .collect()
        })
    })
}
