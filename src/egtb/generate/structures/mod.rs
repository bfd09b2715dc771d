//! Endgames with pawns solved one pawn structure at a time (Bourzutschky, Tamplin, Haworth 2005,
//! Section 2: DTZ "as a sequence of 'fixed pawn structure' sub-EGT generations"). Pawns only
//! move forward: the positions of one placement of the pawns lead, by the other men's moves, to
//! the same placement (or its mirror image, `layout::unit`); by a pawn move to a placement with
//! fewer steps left to promote (a lower pawn level); by a capture or a promotion to a
//! sub-endgame. So the placements are solved level by level, lowest first, each unit of
//! placements by the values solver (`solve`) over its own layout (`Layout::of_unit`), its pawn
//! moves terminal options valued from the units of the levels below, for DTM as for DTZ and
//! DTZ50 (whose counts restart at a pawn move). Units of one level do not reach each other.
//!
//! A unit's memory is that of its own positions, not the endgame's: KBBKNP's largest unit (a
//! black pawn on one square and on its mirror image) has 1.06 G entries, a sixth of the
//! endgame. Each metric goes to the unit's file as soon as it is solved, so a solve holds 6.25
//! bytes an entry at most; the DTM its five-man sub-endgames work out by one ply is kept in
//! files (page cache, not anonymous memory: KRPPKP's would be 25 GiB). Units of one level that
//! fit in memory together are solved side by side.

mod assemble;
mod store;

use super::layout::unit::{Unit, Variant, NO_EP};
use super::layout::Layout;
use super::pool::Pool;
use super::solve::{max_depth, to_file_value, PushValues, Solver, SubTables, Work, RESOLVED};
use crate::chess::{Color, PieceType};
use crate::egtb::format::plies::{CODE_NONE, RULE50_PLIES};
use crate::egtb::format::Metric;
use crate::egtb::index::{EndgameIndex, Half, Symmetry, TbPosition};
use crate::egtb::material::Material;
pub use assemble::write_files;
use rustc_hash::FxHashMap as HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU16, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use store::EpEntry;

/// Seconds spent on each metric's solves and on writing the units' files, summed over the
/// units (of which several may be solved at once: `concurrent_units`).
#[derive(Default, Debug, Clone, Copy)]
pub struct UnitTimes {
    pub dtm: f64,
    pub dtz: f64,
    pub dtz50: f64,
    /// Writing the units' files.
    pub files: f64,
}

impl std::ops::AddAssign for UnitTimes {
    fn add_assign(&mut self, t: UnitTimes) {
        self.dtm += t.dtm;
        self.dtz += t.dtz;
        self.dtz50 += t.dtz50;
        self.files += t.files;
    }
}

/// The metrics a unit solves, in order: DTZ50 of a unit reads its targets' DTZ50.
pub const METRICS: [Metric; 3] = [Metric::Dtm, Metric::Dtz, Metric::Dtz50];

/// Units are filled with whole mirror orbits of placements up to about this many entries
/// (both halves): small placements (KPPKP: 4,096 entries) share one solve's passes.
const UNIT_ENTRIES: u64 = 1 << 26;

/// A unit of work: the variants of some placements of one pawn level, closed under the
/// mirror and with their e.p. variants.
#[derive(Clone, Debug)]
pub struct UnitPlan {
    pub variants: Vec<Variant>,
}

/// The squares `k` pawns of one colour can stand on together (ranks 2-7), as bitboards.
fn pawn_sets(k: u8) -> Vec<u64> {
    let mut out = Vec::new();
    fn rec(from: u8, left: u8, acc: u64, out: &mut Vec<u64>) {
        if left == 0 {
            out.push(acc);
            return;
        }
        for s in from..56 {
            rec(s + 1, left - 1, acc | 1u64 << s, out);
        }
    }
    rec(8, k, 0, &mut out);
    out
}

/// Steps the pawns of `v` still have to make to promote, summed.
fn level_of(v: &Variant) -> u8 {
    let w: u32 = crate::chess::Bitboard(v.pawns[0])
        .into_iter()
        .map(|s| 7 - s.rank() as u32)
        .sum();
    let b: u32 = crate::chess::Bitboard(v.pawns[1])
        .into_iter()
        .map(|s| s.rank() as u32)
        .sum();
    (w + b) as u8
}

/// Entries of one variant of `m` (both halves).
fn variant_entries(m: &Material) -> u64 {
    let index = EndgameIndex::new(m);
    let unit = Unit::new(vec![Variant {
        pawns: [0, 0],
        ep: NO_EP,
    }]);
    2 * Layout::of_unit(&index, unit).size(Half::Wtm)
}

/// The units of `m`, in an order that solves every unit after those its pawn moves reach.
pub fn plan(m: &Material) -> Vec<UnitPlan> {
    let p = PieceType::Pawn;
    let (wp, bp) = (m.count(Color::White, p), m.count(Color::Black, p));
    let (whites, blacks) = (pawn_sets(wp), pawn_sets(bp));
    let mut seen = std::collections::HashSet::new();
    let mut by_level: std::collections::BTreeMap<u8, Vec<Vec<Variant>>> = Default::default();
    for &w in &whites {
        for &b in &blacks {
            if w & b != 0 {
                continue;
            }
            let s = Variant {
                pawns: [w, b],
                ep: NO_EP,
            };
            if !seen.insert(s) {
                continue;
            }
            let mut orbit = vec![s];
            let t = s.mirrored();
            if seen.insert(t) {
                orbit.push(t);
            }
            let plain = orbit.clone();
            for v in plain {
                for side in Color::BOTH {
                    orbit.extend(v.ep_variants(side));
                }
            }
            by_level.entry(level_of(&s)).or_default().push(orbit);
        }
    }
    let per = variant_entries(m);
    let mut out = Vec::new();
    for orbits in by_level.into_values() {
        let mut cur: Vec<Variant> = Vec::new();
        for o in orbits {
            if !cur.is_empty() && (cur.len() + o.len()) as u64 * per > UNIT_ENTRIES {
                out.push(UnitPlan {
                    variants: std::mem::take(&mut cur),
                });
            }
            cur.extend(o);
        }
        if !cur.is_empty() {
            out.push(UnitPlan { variants: cur });
        }
    }
    out
}

/// The pawn level and entries (both halves) of each unit of `m`'s plan, in its order.
pub fn unit_sizes(m: &Material) -> Vec<(u8, u64)> {
    let per = variant_entries(m);
    plan(m)
        .iter()
        .map(|u| (level_of(&u.variants[0]), u.variants.len() as u64 * per))
        .collect()
}

/// Bytes a unit's solve holds an entry of its own at most, in quarters: DTM's and DTZ's init
/// together (a 2-byte value and a 1-byte count each) and the two bits a wave's frontiers take;
/// each metric goes to the unit's file as soon as it is solved (`store::UnitWriter`).
const QUARTER_BYTES_PER_UNIT_ENTRY: u64 = 25;

/// Entries (both halves) of the largest unit of `m`'s plan.
pub fn largest_unit(m: &Material) -> u64 {
    let per = variant_entries(m);
    plan(m)
        .iter()
        .map(|u| u.variants.len() as u64 * per)
        .max()
        .unwrap_or(0)
}

/// Bytes of memory a build of `m` by pawn structure takes at most: the solves of its largest
/// units, `concurrent_units` of them, each with its targets' runs held decompressed, and the
/// block cache through which the sub-endgames are read.
pub fn memory_bytes(m: &Material) -> u64 {
    concurrent_units(m) * unit_bytes(m) + crate::egtb::cache_bytes() as u64
}

/// Memory of one unit's solve in a build of `m`, at most.
fn unit_bytes(m: &Material) -> u64 {
    QUARTER_BYTES_PER_UNIT_ENTRY * largest_unit(m) / 4 + CACHE_BYTES
}

/// A build takes at most this much memory for its units at once.
const UNITS_MEMORY_CAP: u64 = 15 << 30;

/// Units of one level solved at once: one a thread, as many as `UNITS_MEMORY_CAP` and the
/// memory free hold (at least one). Each unit's passes run on every thread too; several side
/// by side fill the time its passes wait for each other (KRPKR's units alone: 184% of two
/// cores).
pub fn concurrent_units(m: &Material) -> u64 {
    let one = unit_bytes(m);
    let room = crate::memory::usable_bytes().map_or(UNITS_MEMORY_CAP, |u| u.min(UNITS_MEMORY_CAP));
    (rayon::current_num_threads() as u64).min(room / one).max(1)
}

/// Bytes of disk the DTM memos of a build of `m` take at most: the values of the side a
/// five-man sub-endgame leaves out, kept as they are worked out (`EndgameTables::remember_dtm`,
/// 2 bytes an entry of that side, in a file beside the tables).
pub fn memo_bytes(m: &Material) -> u64 {
    // The sub-endgames `play::tables::open_subs` opens whose DTM keeps one side, and theirs.
    let one_side = crate::egtb::play::tables::DTM_ONE_SIDE_MEN;
    let mut seen: Vec<Material> = Vec::new();
    let mut wanted = m.sub_endgames();
    while let Some(s) = wanted.pop() {
        if s.men() == one_side && !seen.contains(&s) {
            wanted.extend(s.sub_endgames());
            seen.push(s);
        }
    }
    seen.iter()
        .map(|s| {
            let index = EndgameIndex::new(s);
            2 * Half::BOTH.iter().map(|&h| index.size(h)).max().unwrap_or(0)
        })
        .sum()
}

/// The units that the pawn moves of `unit`'s positions reach (by `by_variant`).
fn targets(unit: &UnitPlan, by_variant: &HashMap<Variant, usize>) -> Vec<usize> {
    let mut out = std::collections::BTreeSet::new();
    for v in unit.variants.iter().filter(|v| v.ep == NO_EP) {
        let occ = v.pawns[0] | v.pawns[1];
        for c in Color::BOTH {
            let fwd: i32 = if c == Color::White { 8 } else { -8 };
            for from in crate::chess::Bitboard(v.pawns[c.index()]) {
                let mut at = from.0 as i32;
                for step in 0..2 {
                    at += fwd;
                    let second = if c == Color::White { 1 } else { 6 };
                    if !(8..56).contains(&at) || occ >> at & 1 != 0 {
                        break; // a promotion, or blocked by a pawn
                    }
                    if step == 1 && from.rank() != second {
                        break;
                    }
                    let mut pawns = v.pawns;
                    pawns[c.index()] ^= (1u64 << from.0) | (1u64 << at);
                    out.insert(by_variant[&Variant { pawns, ep: NO_EP }]);
                }
            }
        }
    }
    out.into_iter().collect()
}

/// The codes of one metric of the units a unit's pawn moves reach, read from their files a
/// run at a time. A push leaves the kings where they are, and the solver walks a unit's
/// entries kings first, so a few runs of each target serve a whole stretch of the walk: the
/// memory of a unit's solve is that of its own entries, not its targets' (`CACHE_BYTES`).
struct Targets<'a> {
    metric: usize,
    units: HashMap<usize, (Layout<'a>, store::UnitReader)>,
    by_variant: &'a HashMap<Variant, usize>,
    /// Decompressed runs, each slot holding the last run mapped to it.
    slots: Vec<Mutex<Option<CachedRun>>>,
    /// The first run that could not be read: the unit's solve is then thrown away.
    failed: Mutex<Option<io::Error>>,
}

struct CachedRun {
    unit: usize,
    half: Half,
    run: usize,
    codes: Arc<Vec<u16>>,
}

/// At most this many bytes of targets' runs are held decompressed.
const CACHE_BYTES: u64 = 256 << 20;

impl<'a> Targets<'a> {
    /// The targets `reached` (unit numbers) for metric number `metric` of `METRICS`.
    fn open(
        metric: usize,
        reached: &[usize],
        units: &[UnitPlan],
        index: &'a EndgameIndex,
        by_variant: &'a HashMap<Variant, usize>,
        open: impl Fn(usize) -> io::Result<store::UnitReader>,
    ) -> io::Result<Targets<'a>> {
        let mut t = Targets {
            metric,
            units: HashMap::default(),
            by_variant,
            slots: Vec::new(),
            failed: Mutex::new(None),
        };
        let mut run_bytes = 1;
        for &u in reached {
            let layout = Layout::of_unit(index, Unit::new(units[u].variants.clone()));
            run_bytes = run_bytes.max(2 * layout.run_len());
            t.units.insert(u, (layout, open(u)?));
        }
        let slots = (CACHE_BYTES / run_bytes).clamp(16, 4096);
        t.slots = (0..slots).map(|_| Mutex::new(None)).collect();
        Ok(t)
    }

    /// An error if a run could not be read while the solve used these targets.
    fn check(self) -> io::Result<()> {
        match self.failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// The codes of run `run` of half `half` of target `unit`.
    fn run(&self, unit: usize, half: Half, run: usize) -> Option<Arc<Vec<u16>>> {
        let key = (unit * 2 + half as usize) * store::RUNS + run;
        // The high bits of a multiplicative hash: the keys of one run in several units differ
        // by multiples of a power of two, which the low bits would map to one slot.
        let hash = (key as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32;
        let slot = &self.slots[hash as usize % self.slots.len()];
        let mut reuse = None;
        // The guard is let go before the slot is locked again.
        let held = lock(slot).take();
        if let Some(c) = held {
            if (c.unit, c.half, c.run) == (unit, half, run) {
                let codes = c.codes.clone();
                *lock(slot) = Some(c);
                return Some(codes);
            }
            reuse = Arc::try_unwrap(c.codes).ok();
        }
        let mut codes = reuse.unwrap_or_default();
        let (_, reader) = &self.units[&unit];
        if let Err(e) = reader.run(self.metric, half, run, &mut codes) {
            lock(&self.failed).get_or_insert(e);
            return None;
        }
        let codes = Arc::new(codes);
        *lock(slot) = Some(CachedRun {
            unit,
            half,
            run,
            codes: codes.clone(),
        });
        Some(codes)
    }
}

/// A lock held only to read or put a value: one that panicked left nothing half done.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

const MIRROR: Symmetry = Symmetry {
    mirror_files: true,
    mirror_ranks: false,
    transpose: false,
};

impl PushValues for Targets<'_> {
    fn code(&self, metric: Metric, succ: &TbPosition) -> u16 {
        // DTZ's pushes are valued by their targets' results, which DTM's codes give too.
        debug_assert!(metric == METRICS[self.metric] || self.metric == 0);
        let sym = if succ.king(Color::White).file() >= 4 {
            MIRROR
        } else {
            Symmetry::default()
        };
        let u = self.by_variant[&Variant::of(succ, sym)];
        let (layout, _) = &self.units[&u];
        let (h, i) = layout.encode(succ).expect("legal successor has an entry");
        let len = layout.run_len();
        match self.run(u, h, (i / len) as usize) {
            Some(codes) => codes[(i % len) as usize],
            // The solve is thrown away (`check`); any value serves until then.
            None => CODE_NONE,
        }
    }
}

/// Where a build keeps its units (`store`) until its files are written.
pub fn work_dir(dir: &Path, m: &Material) -> PathBuf {
    dir.join(format!(".{m}.units"))
}

/// The units of a build of `m` into `dir`, and how many of them its work directory holds
/// done (read by their headers alone).
pub fn units_done(dir: &Path, m: &Material) -> io::Result<(usize, usize)> {
    let units = plan(m);
    let work = work_dir(dir, m);
    if !work.is_dir() {
        return Ok((units.len(), 0));
    }
    let mut done = 0;
    for (n, unit) in units.iter().enumerate() {
        let key = store::key(m, n, &unit.variants);
        if store::UnitReader::open(&store::path(&work, n), key)?.is_some() {
            done += 1;
        }
    }
    Ok((units.len(), done))
}

/// Solves every unit of the endgame of `index` that `work` does not hold yet (`plan`), each
/// read from and written to files only: the sub-endgames' tables, the files of the units its
/// pawn moves reach, its own file. The units of one level, which do not reach each other, are
/// solved `concurrent_units` at a time. DTZ50 is solved on its own always with `full_dtz50`.
pub fn solve_units(
    index: &EndgameIndex,
    subs: &SubTables,
    full_dtz50: bool,
    work: &Path,
    on_unit: &(dyn Fn(usize, usize) + Sync),
) -> io::Result<UnitTimes> {
    use rayon::prelude::*;
    let m = index.material();
    let units = plan(&m);
    let by_variant: HashMap<Variant, usize> = units
        .iter()
        .enumerate()
        .flat_map(|(u, p)| p.variants.iter().map(move |&v| (v, u)))
        .collect();
    std::fs::create_dir_all(work)?;
    let ctx = Context {
        index,
        subs,
        full_dtz50,
        work,
        units: &units,
        by_variant: &by_variant,
        pool: &Pool::default(),
    };
    let mut pending = Vec::new();
    for (n, unit) in units.iter().enumerate() {
        let key = store::key(&m, n, &unit.variants);
        // A unit solved before the build was stopped is kept.
        if store::UnitReader::open(&store::path(work, n), key)?.is_none() {
            pending.push(n);
        }
    }
    let at_once = concurrent_units(&m) as usize;
    let times = Mutex::new(UnitTimes::default());
    let done = std::sync::atomic::AtomicUsize::new(units.len() - pending.len());
    let mut rest = &pending[..];
    while let Some(&first) = rest.first() {
        let level = level_of(&units[first].variants[0]);
        let same = rest
            .iter()
            .take_while(|&&n| level_of(&units[n].variants[0]) == level)
            .count();
        let (this, next) = rest.split_at(same);
        for batch in this.chunks(at_once) {
            batch.par_iter().try_for_each(|&n| -> io::Result<()> {
                let t = ctx.solve(n)?;
                *lock(&times) += t;
                on_unit(done.fetch_add(1, Relaxed) + 1, units.len());
                Ok(())
            })?;
        }
        rest = next;
    }
    Ok(times.into_inner().unwrap_or_else(|e| e.into_inner()))
}

/// What every unit's solve of one build reads.
struct Context<'a> {
    index: &'a EndgameIndex,
    subs: &'a SubTables,
    full_dtz50: bool,
    work: &'a Path,
    units: &'a [UnitPlan],
    by_variant: &'a HashMap<Variant, usize>,
    /// The arrays of solves done, for the next.
    pool: &'a Pool,
}

impl Context<'_> {
    /// Solves unit `n`, whose targets are solved, and writes its file.
    fn solve(&self, n: usize) -> io::Result<UnitTimes> {
        let Context {
            index,
            subs,
            full_dtz50,
            work,
            units,
            by_variant,
            pool,
        } = *self;
        let m = index.material();
        let unit = &units[n];
        let key = store::key(&m, n, &unit.variants);
        let mut times = UnitTimes::default();
        let none = |_: u32, _: u64| {};
        let open = |u: usize| -> io::Result<store::UnitReader> {
            let key = store::key(&m, u, &units[u].variants);
            store::UnitReader::open(&store::path(work, u), key)?.ok_or_else(|| {
                io::Error::new(io::ErrorKind::NotFound, format!("unit {u} not solved"))
            })
        };
        let reached = targets(unit, by_variant);
        let load = |metric: usize| Targets::open(metric, &reached, units, index, by_variant, open);
        let layout = Layout::of_unit(index, Unit::new(unit.variants.clone()));
        // `AtomicU16` and `u16` are laid out alike: std collects these in place, so neither
        // conversion puts a second array beside the solve's.
        let codes_of = |work: Work| -> [Vec<u16>; 2] {
            work.map(|h| {
                h.expect("both halves")
                    .into_iter()
                    .map(|a| a.into_inner() & !RESOLVED)
                    .collect()
            })
        };
        let give_back = |codes: [Vec<u16>; 2]| {
            for c in codes {
                pool.values.put(c.into_iter().map(AtomicU16::new).collect());
            }
        };
        // DTM's and DTZ's init passes are one: a move's class and target serve both.
        let t = Instant::now();
        let dtm_targets = load(0)?;
        fn solver<'b>(
            layout: &'b Layout<'b>,
            subs: &'b SubTables,
            metric: Metric,
            p: &'b Targets<'b>,
            pool: &'b Pool,
        ) -> Solver<'b> {
            Solver::new(layout, subs, metric, None)
                .with_pushes(p)
                .with_pool(pool)
        }
        let (dtm_start, dtz_start) =
            solver(&layout, subs, Metric::Dtm, &dtm_targets, pool).init_dtm_dtz();
        dtm_targets.check()?;
        // The waves never ask a push's value: pushes are options of the init alone.
        let empty = Targets::open(0, &[], units, index, by_variant, open)?;
        let dtm =
            codes_of(solver(&layout, subs, Metric::Dtm, &empty, pool).run(Some(dtm_start), &none));
        times.dtm += t.elapsed().as_secs_f64();
        // Each metric goes to the unit's file as soon as it is solved.
        let t = Instant::now();
        let path = store::path(work, n);
        let mut file = store::UnitWriter::create(&path, layout.run_len())?;
        let mut ep = ep_entries(index, &layout, &dtm);
        let mut max_raw = [0; 3];
        let mut keep = |k: usize, codes: &[Vec<u16>; 2], ep: &mut [(usize, EpEntry)]| {
            max_raw[k] = codes
                .iter()
                .flatten()
                .map(|&c| to_file_value(METRICS[k], c).raw())
                .max()
                .unwrap_or(0);
            for (at, e) in ep.iter_mut() {
                e.codes[k] = codes[e.half as usize][*at];
            }
            file.add(codes)
        };
        keep(0, &dtm, &mut ep)?;
        give_back(dtm);
        times.files += t.elapsed().as_secs_f64();
        let t = Instant::now();
        let dtz = solver(&layout, subs, Metric::Dtz, &empty, pool).run(Some(dtz_start), &none);
        times.dtz += t.elapsed().as_secs_f64();
        // DTZ50 is DTZ where nothing is deeper than 100 plies, the pushes reach units where
        // it is, and the sub-endgames' results the rule changes change no value here
        // (`Solver::dtz_holds_under_rule50`); else a solve of its own.
        let t = Instant::now();
        let mut below_same = true;
        for &u in &reached {
            below_same &= open(u)?.facts.dtz50_same;
        }
        let mut same = !full_dtz50 && below_same && max_depth(&dtz) <= RULE50_PLIES;
        if same && !subs.rule50_clean() {
            let t50 = load(2)?;
            same = solver(&layout, subs, Metric::Dtz50, &t50, pool)
                .dtz_holds_under_rule50(&dtz)
                .is_some();
            t50.check()?;
        }
        let dtz = codes_of(dtz);
        times.dtz50 += t.elapsed().as_secs_f64();
        let t = Instant::now();
        keep(1, &dtz, &mut ep)?;
        times.files += t.elapsed().as_secs_f64();
        let dtz50 = if same {
            dtz
        } else {
            give_back(dtz);
            let t = Instant::now();
            let t50 = load(2)?;
            let dtz50 = solver(&layout, subs, Metric::Dtz50, &t50, pool).run(None, &none);
            t50.check()?;
            times.dtz50 += t.elapsed().as_secs_f64();
            codes_of(dtz50)
        };
        let t = Instant::now();
        keep(2, &dtz50, &mut ep)?;
        give_back(dtz50);
        file.finish(
            &path,
            key,
            store::UnitFacts {
                max_raw,
                dtz50_same: same,
            },
            &ep.into_iter().map(|(_, e)| e).collect::<Vec<_>>(),
        )?;
        times.files += t.elapsed().as_secs_f64();
        Ok(times)
    }
}

/// The entries of a unit's e.p. positions in Nalimov's e.p. zone, each with its place in the
/// unit's layout (`dtm` tells the entries that hold a position), their codes still to fill.
fn ep_entries(index: &EndgameIndex, layout: &Layout, dtm: &[Vec<u16>; 2]) -> Vec<(usize, EpEntry)> {
    let mut out = Vec::new();
    let Some(u) = layout.unit() else {
        return out;
    };
    if u.variants.iter().all(|v| v.ep == NO_EP) {
        return out;
    }
    for &h in index.stored_halves() {
        for idx in 0..layout.size(h) {
            if dtm[h as usize][idx as usize] == CODE_NONE {
                continue;
            }
            let pos = layout.decode_valid(h, idx);
            if pos.ep.is_none() {
                continue;
            }
            // An e.p. position Nalimov's e.p. zone does not keep has no entry.
            if let Some((nh, ni)) = index.index_own(&pos) {
                debug_assert_eq!(nh, h);
                let codes = [0; 3];
                out.push((
                    idx as usize,
                    EpEntry {
                        half: h,
                        index: ni,
                        codes,
                    },
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every six-man endgame with pawns builds by pawn structure in the 16 GiB of anonymous
    /// memory a build may take: its largest unit's solve with the caches beside it.
    #[test]
    fn every_six_man_solve_with_pawns_fits_in_16_gib() {
        let six: Vec<Material> = Material::all_up_to(6)
            .into_iter()
            .filter(|m| m.men() == 6 && m.has_pawns())
            .collect();
        assert_eq!(six.len(), 195);
        let (most, largest) = six
            .iter()
            .map(|m| (memory_bytes(m), m.to_string()))
            .max()
            .expect("endgames");
        assert!(most <= 16 << 30, "{largest}: {} MiB", most >> 20);
        // The largest units, a lone pawn on one square and on its mirror image beside four
        // other men (KRPKBN: 2^31 entries), take most of it.
        assert!(most >= 12 << 30, "{largest}: {} MiB", most >> 20);
    }

    /// A build stopped between units goes on from the units done: a unit whose file is
    /// missing (a kill in the middle of its write leaves only a `.part`) is solved again to
    /// the same bytes, and no other is; a damaged unit file is refused by name.
    #[test]
    fn a_stopped_build_solves_only_the_missing_units() {
        use crate::egtb::generate::{gentb, GenOptions};
        let dir = tempfile::tempdir().expect("temporary directory");
        let kpkp = Material::parse("KPKP").expect("material");
        let opts = GenOptions {
            verify: false,
            ..GenOptions::new(dir.path())
        };
        gentb(&kpkp.sub_endgames(), &opts, &mut |_| {}).expect("sub-endgames");
        let index = EndgameIndex::new(&kpkp);
        let tables = crate::egtb::play::tables::open_subs(std::iter::once(dir.path()), &kpkp, None)
            .expect("sub-endgames open");
        let subs = SubTables::new(&kpkp, tables);
        let work = dir.path().join("units");
        let solved = std::sync::atomic::AtomicUsize::new(0);
        let count = |_: usize, _: usize| {
            solved.fetch_add(1, Relaxed);
        };
        solve_units(&index, &subs, false, &work, &count).expect("units");
        let units = plan(&kpkp).len();
        assert!(units > 2, "{units} units");
        assert_eq!(solved.swap(0, Relaxed), units);
        let files: Vec<Vec<u8>> = (0..units)
            .map(|n| std::fs::read(store::path(&work, n)).expect("unit file"))
            .collect();
        // Unit 1 is stopped in the middle of its write.
        let one = store::path(&work, 1);
        std::fs::remove_file(&one).expect("remove");
        std::fs::write(one.with_extension("part"), &files[1][..100]).expect("part");
        solve_units(&index, &subs, false, &work, &count).expect("units resumed");
        assert_eq!(solved.swap(0, Relaxed), 1);
        for (n, bytes) in files.iter().enumerate() {
            assert_eq!(
                &std::fs::read(store::path(&work, n)).expect("unit"),
                bytes,
                "unit {n}"
            );
        }
        // A unit file cut short is an error that names it, not a unit taken as done.
        let last = store::path(&work, units - 1);
        std::fs::write(&last, &files[units - 1][..files[units - 1].len() - 1]).expect("cut");
        let e = solve_units(&index, &subs, false, &work, &count).expect_err("damaged unit");
        assert!(e.to_string().contains(&last.display().to_string()), "{e}");
    }
}
