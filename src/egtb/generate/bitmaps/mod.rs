//! The pawnless solver in bitmaps (Thompson 1996, Sections 3-4: one bit a position a set), for
//! endgames whose working values do not fit in memory (six men: up to 21 G entries). Per half
//! four bits an entry in one cache line (`state`); no value is held per entry. Depth 0 holds
//! the mates; pass n then, for each half in turn:
//! - finds the wins at n + 1 of the predecessors of the other half's losses at n, by pushing
//!   the frontier's un-moves (`frontier`) or by pulling each open entry's moves (`pull`),
//!   whichever costs less;
//! - adds the sub-tables' positions of depth n by un-captures (`seeds`);
//! - finds the losses at n + 1 among the predecessors of wins: by Thompson's forward check
//!   (`check`) or, where a counter fits, by counting each entry's moves down (`counters`).
//!
//! A later solve of the endgame (DTZ and DTZ50 after DTM) makes only DTM's losses candidates
//! and starts its counters from DTM's counts. Where the layout's last man stands alone, a word
//! of a plane is one frame of the other men, and the passes take a word at a time, as
//! Thompson's generator took a board (1996, Section 4). The two halves of a pass run one after
//! the other, so no check sees a win of the same pass. Every depth is logged to disk
//! (`depth_log`), and the values are put together in Nalimov order at the end (`assemble`).
//! What each of these saves is measured in `docs/benchmarks.md` (the bitmap solver). The
//! parts share this module's imports (`use super::*`).

mod assemble;
mod check;
mod counters;
mod frontier;
mod pull;
mod seeds;
mod state;

use super::bits::{Bits, BLOCK_WORDS};
use super::depth_log::{DepthLog, DepthReader, LogScratch, SEGMENT};
use super::layout::Layout;
use super::move_counts::{nibble, CountsWriter, MoveCounts};
use super::moves::{
    for_each_capturer_frame_uncapture, for_each_conversion, for_each_frame_capture,
    for_each_frame_move, for_each_frame_uncapture, for_each_move, for_each_quiet,
    for_each_quiet_set, for_each_uncapture, in_check, may_convert, Legality, MoveClass,
};
use super::solve::{
    for_each_pred, for_each_pred_word, for_each_succ_word, to_file_value, SubTables,
};
use super::summary::{PassTimes, SolveTimes, TimesSink};
use super::GenError;
use crate::chess::{Bitboard, Color, PieceType, Square};
use crate::egtb::format::plies::{loss, wdl_of_result, win, RULE50_PLIES};
use crate::egtb::format::Wdl5;
use crate::egtb::format::{Metric, Outcome, TbValue};
use crate::egtb::index::FrameCache;
use crate::egtb::index::{Half, Symmetry, TbPosition};
use crate::egtb::play::tables::DtmRuns;
use crate::egtb::Material;
use crate::memory::{try_vec, OutOfMemory};
pub use assemble::{assemble, Assembly, Resolved};
use assemble::{LOST_KIND, WON_KIND};
use counters::{
    count_down_above, gather_nibbles, left, nibbles_above, spread_nibbles, Inexact, Nibbles,
    OrbitCounts, MAX_CARRIED, MAX_OPEN, NOT_COUNTED,
};
use frontier::Reached;
use pull::{live_chunks, win_word, OpenEntries, OpenWords, PullChoice, LIVE_CHUNK};
use rayon::prelude::*;
use state::{Carry, HalfBits, Losable, PassState, LOST, WON};
use std::io;
use std::path::Path;
use std::sync::atomic::{
    AtomicBool, AtomicU16, AtomicU32, AtomicU64, AtomicUsize,
    Ordering::{Acquire, Relaxed, Release},
};

/// The men a capture can take and leave a sub-table to seed from, in the order seeds are planned.
const CAPTURABLE: [PieceType; 4] = [
    PieceType::Knight,
    PieceType::Bishop,
    PieceType::Rook,
    PieceType::Queen,
];

/// Bytes of memory a solve of `layout` (of `material`) takes at most: five bits an entry (the
/// four planes and `losable`, in DTM the counters' carry bits or the capture wins in its
/// place), one candidate bit per entry of the larger half, and four bytes per entry of each
/// sub-table half that seeds it (counted as if every entry were decided).
/// The bitmaps count only the pages the solve touches (`touched_bytes`).
pub fn memory_bytes(layout: &Layout, material: &Material) -> u64 {
    let [w, b] = Half::BOTH.map(|h| touched_bytes(layout, h, 1));
    let bits = 5 * (w + b) + w.max(b);
    let mut seeds = 0;
    for mover in Color::BOTH {
        for captured in CAPTURABLE {
            if material.count(!mover, captured) == 0 {
                continue;
            }
            let sub = material.without(!mover, captured);
            if sub.men() > 2 {
                let index = crate::egtb::index::EndgameIndex::new(&sub.canonical().0);
                seeds += 4 * Half::BOTH.iter().map(|&h| index.size(h)).max().unwrap_or(0);
            }
        }
    }
    bits + seeds
}

/// The pages that an array of `bits` bits an entry over half `h` of `layout` has touched at
/// most, in bytes: those of the live runs (`Layout::live_runs`), rounded out to the huge pages
/// (2 MiB) that `HugeArray` asks for. Interleaved planes (`Bits`) count as one array of their
/// bits together: the same bytes.
fn touched_bytes(layout: &Layout, h: Half, bits: u64) -> u64 {
    const PAGE: u64 = 2 << 20;
    let mut total = 0;
    let mut end_so_far = 0;
    for run in layout.live_runs(h) {
        let start = (run.start * bits / 8 / PAGE * PAGE).max(end_so_far);
        let end = (run.end * bits).div_ceil(8).div_ceil(PAGE) * PAGE;
        total += end.saturating_sub(start);
        end_so_far = end_so_far.max(end);
    }
    total
}

pub struct BitmapSolver<'a> {
    pub layout: &'a Layout<'a>,
    pub subs: &'a SubTables,
    pub material: Material,
    pub metric: Metric,
    /// An earlier solve of the endgame (DTM's). Its depth 0, the mates (the same in every
    /// metric), is read from its log instead of found again by a scan of every entry (KRBKNN:
    /// about 100 s). And only the entries it lost can be lost now (DTZ has DTM's results,
    /// DTZ50 turns some losses into draws): no other entry is ever a candidate, so the passes
    /// check no drawn or won entry move by move, as they do for DTM, again and again.
    pub earlier: Option<&'a Resolved>,
    /// Which halves keep an un-move counter (four bits) per entry (`counters`).
    pub counting: Counting,
    /// How the wins of a pass are found (`Pulling`).
    pub pulling: Pulling,
    /// Where each pass's steps, their seconds and what decided the pull go (`SolveTimes`).
    pub pass_times: Option<&'a TimesSink>,
}

/// Seconds from one step to the next (`SolveTimes`).
struct Stopwatch(std::time::Instant);

impl Stopwatch {
    fn start() -> Stopwatch {
        Stopwatch(std::time::Instant::now())
    }

    /// Seconds since the start or the last lap; starts the next.
    fn lap(&mut self) -> f64 {
        let now = std::time::Instant::now();
        (now - std::mem::replace(&mut self.0, now)).as_secs_f64()
    }
}

/// How a pass finds the entries its frontier's losses make won.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pulling {
    /// By un-moves from the losses (push), or, where fewer entries are left open than the
    /// frontier holds losses, by the moves of the entries left open (pull): whichever makes
    /// fewer moves (`OpenEntries::pull_costs_less`).
    Chosen,
    /// Never pull: Thompson's un-moves alone (for comparisons).
    Never,
    /// Pull in every pass whose frontier holds losses (for tests of the pulled passes).
    Always,
}

/// Which halves of a bitmap solve keep un-move counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counting {
    /// As many as fit beside the solve under `MEMORY_CAP`.
    WhereMemoryAllows,
    /// None: Thompson's checks alone, as in the largest endgames.
    Off,
    /// This half only, if it fits (for tests of a solve that mixes the two).
    Only(Half),
}

/// Anonymous memory a bitmap build may take: the counters are added only below it.
const MEMORY_CAP: u64 = 16 << 30;

/// Standard material values of the side to move of `h`, to guess which side loses.
fn side_value(material: &Material, h: Half) -> u32 {
    [
        (PieceType::Queen, 9),
        (PieceType::Rook, 5),
        (PieceType::Bishop, 3),
        (PieceType::Knight, 3),
    ]
    .iter()
    .map(|&(kind, v)| v * material.count(h.stm(), kind) as u32)
    .sum()
}

impl BitmapSolver<'_> {
    /// `seed_depth` of a sub-endgame position for DTZ or DTZ50, from its result (the zeroing
    /// move stops the count: the sub-endgame's own distances do not matter).
    fn zeroing_seed(&self, r: Wdl5) -> Option<(u16, bool)> {
        match wdl_of_result(r, self.metric == Metric::Dtz50) {
            2 => Some((0, true)),
            0 => Some((0, false)),
            _ => None,
        }
    }

    /// The depth in plies at which a sub-table value joins the frontier, and whether Y wins;
    /// None for draws and broken entries.
    fn seed_depth(&self, v: crate::egtb::format::TbValue) -> Option<(u16, bool)> {
        let zero = self.metric != Metric::Dtm;
        match v.outcome() {
            Outcome::Win(k) => Some((if zero { 0 } else { 2 * k - 1 }, true)),
            Outcome::Loss(k) => Some((if zero { 0 } else { 2 * k }, false)),
            _ => None,
        }
    }

    /// Does every capture of a candidate lead to a loss at depth 0, so that no sub-table need
    /// be read? In DTZ every candidate is one of DTM's losses (`earlier`), whose captures all
    /// reach positions the opponent wins, and a zeroing move stops the count; so in DTZ50 too
    /// when no sub-endgame holds a result the rule changes.
    fn captures_lose(&self) -> bool {
        self.earlier.is_some()
            && match self.metric {
                Metric::Dtm => false,
                Metric::Dtz => true,
                Metric::Dtz50 => self.subs.rule50_clean(),
                Metric::Wdl => false,
            }
    }

    /// Are the first pass's wins by a capture to a position Y loses, in half `h`, read from
    /// DTM's record of them (`HalfBits::capture_wins`) instead of found by un-capturing every
    /// such position again? Where this solve's seeds lose where DTM's did: in DTZ, and in
    /// DTZ50 when no sub-endgame holds a result the rule changes. KQRKBN's DTZ spent 155 s on
    /// those un-captures, 2,321 M of White's entries won by them.
    fn reads_capture_wins(&self, h: Half) -> bool {
        self.earlier.is_some_and(|e| e.capture_wins[h as usize])
            && match self.metric {
                Metric::Dtm | Metric::Wdl => false,
                Metric::Dtz => true,
                Metric::Dtz50 => self.subs.rule50_clean(),
            }
    }

    /// Do the counters count an entry's captures as well as its quiet moves? Unless they all
    /// lose (`captures_lose`): un-captures from the sub-tables' positions count them down in
    /// the pass of their depth, so that an entry whose counter reaches zero is lost with no
    /// sub-table read, instead of checked capture by capture each time one of its captures is
    /// reached.
    fn counts_captures(&self) -> bool {
        !self.captures_lose()
    }

    /// Is `h` the half of the side with less material, which loses most of its entries (KQRKB:
    /// 88% of Black's)? In a solve with no earlier one, its counters are all started before
    /// the first pass: nearly every entry of it becomes a candidate, and a count that reads no
    /// successor costs less than the first check it spares.
    fn loses_most(&self, h: Half) -> bool {
        side_value(&self.material, h) < side_value(&self.material, Half::of(!h.stm()))
    }

    /// DTM's quiet counts, where this later solve starts its counters at them: it counts no
    /// capture.
    fn quiet_counts(&self) -> Option<&MoveCounts> {
        self.earlier
            .and_then(|e| e.quiet.as_ref())
            .filter(|_| !self.counts_captures())
    }

    /// Which counters `precount` started at `MAX_OPEN`, below their entries' moves: in a
    /// later solve that starts them at DTM's quiet counts, those past what its counters hold
    /// (`MAX_OPEN`, or `MAX_CARRIED` in the half `carried`). (DTM's own counts are exact, with
    /// a carry up to `MAX_CARRIED`.)
    fn inexact_counts(&self, carried: Option<Half>) -> Inexact<'_> {
        match self.quiet_counts() {
            Some(q) => Inexact::PastQuiet {
                counts: q,
                carries: carried == Some(q.half()),
            },
            None => Inexact::Nowhere,
        }
    }

    /// Which halves keep un-move counters: those that fit beside the solve under
    /// `MEMORY_CAP`, the half of the side with less material first (it has the most losses,
    /// and so the most candidates). Without a counter, a predecessor of a win is checked move
    /// by move each time one of its successors is won (KBBKN's DTM: 125 M checks for 16 M
    /// losses); with one, it is lost when its last move is found to lose.
    ///
    /// And which half of a later solve carries its counters started at DTM's quiet counts
    /// (`HalfBits::carry`, one bit an entry more, where it fits after the counters), so that
    /// they start exact up to `MAX_CARRIED` quiet moves: KQRKBN's Black (king, bishop and
    /// knight) mostly has more than `MAX_OPEN`, and its DTZ counted each such loss's moves
    /// again at zero (93 s of checks).
    fn counted_halves(&self) -> ([bool; 2], Option<Half>) {
        let mut out = [false; 2];
        if self.counting == Counting::Off {
            return (out, None);
        }
        // Nothing of the solve is allocated yet: its bitmaps are taken off the memory
        // available here.
        let cap = crate::memory::usable_bytes().map_or(MEMORY_CAP, |u| u.min(MEMORY_CAP));
        let mut room = cap.saturating_sub(memory_bytes(self.layout, &self.material));
        // A half whose losable entries are kept as words leaves its bit an entry free.
        for h in Half::BOTH {
            if self
                .earlier
                .is_some_and(|e| Losable::sparse_fits(self.layout, h, e.lost[h as usize]))
            {
                room += touched_bytes(self.layout, h, 1);
            }
        }
        let mut halves = Half::BOTH;
        halves.sort_by_key(|&h| (side_value(&self.material, h), h != Half::Btm));
        for h in halves {
            if matches!(self.counting, Counting::Only(only) if only != h) {
                continue;
            }
            let size = touched_bytes(self.layout, h, 4);
            if size <= room {
                out[h as usize] = true;
                room -= size;
            }
        }
        let carried = self
            .quiet_counts()
            .map(MoveCounts::half)
            .filter(|&h| out[h as usize] && touched_bytes(self.layout, h, 1) <= room);
        (out, carried)
    }

    /// Runs the solve; the depths go to a log at `log_path`. `on_pass(pass, resolved)`.
    pub fn solve(
        &self,
        log_path: &Path,
        on_pass: &(dyn Fn(u32, u64) + Sync),
    ) -> Result<Resolved, GenError> {
        let io = |e: io::Error| GenError::Io(log_path.to_path_buf(), e);
        // The seconds of the steps before the first pass, for `pass_times`.
        let mut watch = Stopwatch::start();
        let mut setup = Vec::new();
        let mut lap = |step: &'static str| setup.push((step, watch.lap()));
        let layout = self.layout;
        let (counted, carried) = self.counted_halves();
        let half_bits = |h: Half| {
            let size = layout.size(h);
            // Where the mapping with counters is refused, the half goes without them.
            HalfBits::new(size, counted[h as usize]).or_else(|_| HalfBits::new(size, false))
        };
        let mut bits = [half_bits(Half::Wtm)?, half_bits(Half::Btm)?];
        let seeds = self.seeds()?;
        lap("seeds");
        let mut log = DepthLog::create(log_path).map_err(io)?;

        if let Some(earlier) = self.earlier {
            for h in Half::BOTH {
                bits[h as usize].losable = Some(Losable::read(layout, h, earlier)?);
            }
            lap("losable");
        }

        let counts_path = log_path.with_extension("counts");
        let (quiet, premated) = self.precount(&mut bits, &counts_path, carried)?;
        lap("counters");
        if self.earlier.is_none() {
            for h in Half::BOTH {
                let b = &mut bits[h as usize];
                if b.carry.is_none() {
                    b.capture_wins = Some(Bits::new(layout.size(h))?);
                }
            }
        }
        let inexact = self.inexact_counts(carried);
        let cand = Bits::<1>::new(layout.size(Half::Wtm).max(layout.size(Half::Btm)))?;
        // Every array of the solve is taken: those an earlier solve left that it did not take
        // again go back.
        crate::memory::release_recycled();
        let mut state = PassState {
            bits,
            cand,
            counts_captures: self.counts_captures(),
        };
        let bits = &state.bits;

        // Depth 0: the mates.
        let resolved = AtomicU64::new(0);
        // Per half: its entries resolved so far, and those lost at the pass's depth
        // (`OpenEntries::pull_costs_less`).
        let mut resolved_in = [0u64; 2];
        let mut lost_now = [0u64; 2];
        // Per half: its broken entries that a pull has marked won (`pull_wins`).
        let mut marked_broken = [0u64; 2];
        let mut lost_in = [0u64; 2];
        let mut choice = PullChoice::default();
        for h in Half::BOTH {
            let b = &bits[h as usize];
            let mates = AtomicU64::new(0);
            let mated = |idx: u64| {
                b.bits.set(LOST, idx);
                b.bits.set(b.now, idx);
                mates.fetch_add(1, Relaxed);
            };
            if let Some(earlier) = self.earlier {
                earlier.log.for_each_at_depth(h, 0, mated).map_err(io)?;
            } else if let Some(found) = premated[h as usize] {
                mates.fetch_add(found, Relaxed);
            } else {
                // Only the live runs hold positions: KQRKBN's scan skips over a quarter of its
                // entries.
                live_chunks(layout, h, |range| {
                    layout.scan_mates(h, range, |idx, pos| {
                        if in_check(pos) && for_each_move(pos, |_, _| false) {
                            mated(idx);
                        }
                    });
                    0
                });
            }
            log.append(h, 0, b.bits.plane(b.now)).map_err(io)?;
            let mates = mates.into_inner();
            resolved.fetch_add(mates, Relaxed);
            (resolved_in[h as usize], lost_now[h as usize]) = (mates, mates);
            lost_in[h as usize] = mates;
        }
        lap("mates");
        on_pass(0, resolved.load(Relaxed));
        let open = Half::BOTH.map(|h| OpenEntries::sample(layout, h));
        lap("sample");
        // Which kinds of entry each depth resolved: the values' range, known before the files
        // are written (their width).
        let mut kinds = vec![if resolved.load(Relaxed) > 0 {
            LOST_KIND
        } else {
            0
        }];

        let last_seed = seeds
            .iter()
            .map(|s| s.starts.len().saturating_sub(2))
            .max()
            .unwrap_or(0) as u16;
        let cap = if self.metric == Metric::Dtz50 {
            RULE50_PLIES
        } else {
            u16::MAX / 4
        };
        if let Some(sink) = self.pass_times {
            sink.report(&SolveTimes::Setup {
                material: self.material,
                metric: self.metric,
                steps: setup,
            });
        }
        let mut n: u16 = 0;
        while n < cap {
            let won = [AtomicU64::new(0), AtomicU64::new(0)];
            let lost = [AtomicU64::new(0), AtomicU64::new(0)];
            let mut times: [PassTimes; 2] = Default::default();
            for h in Half::BOTH {
                // Y = the side to move of `h`: its positions at depth n, in this table and in
                // the sub-tables its opponent captures into. Predecessors of losses are won
                // at once; those of wins are checked once each, after all are marked.
                let pred = Half::of(!h.stm());
                let ph = pred as usize;
                let losses = lost_now[h as usize];
                let pull = match self.pulling {
                    Pulling::Chosen => choice.pull_costs_less(h, n, losses).unwrap_or_else(|| {
                        open[ph].pull_costs_less(resolved_in[ph], marked_broken[ph], losses)
                    }),
                    Pulling::Never => false,
                    Pulling::Always => losses > 0,
                };
                let (loss_words, open_words) = (AtomicU64::new(0), OpenWords::default());
                let mut watch = Stopwatch::start();
                if pull {
                    marked_broken[ph] += self.pull_wins(&state, h, &won[ph], &open_words);
                }
                let t_pull = watch.lap();
                self.frontier(&state, h, pull, &won[ph], &loss_words);
                let t_frontier = watch.lap();
                let wins_read = n == 0 && self.win_recorded_captures(&state, pred, &won[ph])?;
                let captures_only = n == 0 && self.mark_captures_only(&state, pred);
                for s in seeds.iter().filter(|s| s.mover != h.stm()) {
                    self.seed(&state, s, n, [wins_read, captures_only], &won[ph]);
                }
                let t_seeds = watch.lap();
                self.check_candidates(&state, h, n, inexact, &lost[ph]);
                let loss_words = loss_words.into_inner();
                let left = open_words.left.into_inner();
                choice.saw(h, n, losses, loss_words, pull.then_some(left));
                times[ph] = PassTimes {
                    pulled: pull,
                    losses,
                    loss_words,
                    open_valid: open[ph].valid.saturating_sub(resolved_in[ph]),
                    open_words: open_words.read.into_inner(),
                    won: won[ph].load(Relaxed),
                    lost: lost[ph].load(Relaxed),
                    pull: t_pull,
                    frontier: t_frontier,
                    seeds: t_seeds,
                    checks: watch.lap(),
                };
            }
            let won = won.map(AtomicU64::into_inner);
            let lost = lost.map(AtomicU64::into_inner);
            for h in 0..2 {
                resolved_in[h] += won[h] + lost[h];
                lost_in[h] += lost[h];
            }
            lost_now = lost;
            let (won, lost): (u64, u64) = (won.iter().sum(), lost.iter().sum());
            for b in state.bits.iter_mut() {
                b.now = b.next();
            }
            let mut watch = Stopwatch::start();
            for h in Half::BOTH {
                let b = &state.bits[h as usize];
                log.append(h, n + 1, b.bits.plane(b.now)).map_err(io)?;
            }
            if let Some(sink) = self.pass_times {
                sink.report(&SolveTimes::Pass {
                    material: self.material,
                    metric: self.metric,
                    n,
                    halves: times,
                    log_seconds: watch.lap(),
                });
            }
            kinds.push(if won > 0 { WON_KIND } else { 0 } | if lost > 0 { LOST_KIND } else { 0 });
            let done = won + lost;
            resolved.fetch_add(done, Relaxed);
            n += 1;
            on_pass(n as u32, resolved.load(Relaxed));
            if done == 0 && n > last_seed {
                break;
            }
        }
        // The won bits go to the log too: the values are put together after later solves,
        // which need the memory.
        let PassState { bits, cand, .. } = state;
        drop(cand);
        for h in Half::BOTH {
            let b = &bits[h as usize].bits;
            log.append_won(h, b.plane(WON)).map_err(io)?;
            log.append_lost(h, b.plane(LOST)).map_err(io)?;
            if let Some(c) = &bits[h as usize].capture_wins {
                log.append_capture_wins(h, c.plane(0)).map_err(io)?;
            }
        }
        let capture_wins = Half::BOTH.map(|h| bits[h as usize].capture_wins.is_some());
        drop(bits);
        Ok(Resolved {
            log: log.finish().map_err(io)?,
            kinds,
            quiet,
            capture_wins,
            lost: lost_in,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The solve of every pawnless six-man endgame fits in the 16 GiB of anonymous memory a
    /// build may take, the largest (four different men) with room to spare.
    #[test]
    fn every_pawnless_six_man_solve_fits_in_16_gib() {
        let six: Vec<Material> = Material::all_up_to(6)
            .into_iter()
            .filter(|m| m.men() == 6 && !m.has_pawns())
            .collect();
        // 35 of four men against the bare king, 80 of three against one, 55 of two against two.
        assert_eq!(six.len(), 170);
        let (most, largest) = six
            .iter()
            .map(|m| {
                let index = crate::egtb::index::EndgameIndex::new(m);
                (memory_bytes(&Layout::new(&index), m), m.to_string())
            })
            .max()
            .expect("endgames");
        assert!(most <= 16 << 30, "{largest}: {} MiB", most >> 20);
        assert!(most >= 8 << 30, "{largest}: {} MiB", most >> 20);
        // The largest endgame of two against two still has room for the counters of its
        // losing half (Black to move).
        let kqrkbn = Material::parse("KQRKBN").unwrap();
        let index = crate::egtb::index::EndgameIndex::new(&kqrkbn);
        let layout = Layout::new(&index);
        let solve = memory_bytes(&layout, &kqrkbn);
        let counters = touched_bytes(&layout, Half::Btm, 4);
        assert!(
            solve + counters <= MEMORY_CAP && solve + 2 * counters > MEMORY_CAP,
            "{} + {} MiB",
            solve >> 20,
            counters >> 20
        );
        // In its DTZ, White's 82,840 losses are kept as words (`Losable`), and Black's
        // counters carry in the bit an entry that leaves free.
        assert!(Losable::sparse_fits(&layout, Half::Wtm, 82_840));
        let freed = touched_bytes(&layout, Half::Wtm, 1);
        let carry = touched_bytes(&layout, Half::Btm, 1);
        assert!(solve + counters + carry - freed <= MEMORY_CAP);
    }
}
