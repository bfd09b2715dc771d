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
//! endgame.

use super::layout::unit::{Unit, Variant, NO_EP};
use super::layout::Layout;
use super::solve::{max_depth, PushValues, Solver, SubTables, Work, RESOLVED};
use crate::chess::{Color, PieceType};
use crate::egtb::format::plies::{CODE_NONE, RULE50_PLIES};
use crate::egtb::format::Metric;
use crate::egtb::index::{EndgameIndex, FrameCache, Half, Symmetry, TbPosition};
use crate::egtb::material::Material;
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU16, Ordering::Relaxed};
use std::time::Instant;

/// Seconds spent on each metric's solves and on putting the values in Nalimov order.
#[derive(Default, Debug, Clone, Copy)]
pub struct UnitTimes {
    pub dtm: f64,
    pub dtz: f64,
    pub dtz50: f64,
    pub order: f64,
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
    pub level: u8,
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
    for (level, orbits) in by_level {
        let mut cur: Vec<Variant> = Vec::new();
        for o in orbits {
            if !cur.is_empty() && (cur.len() + o.len()) as u64 * per > UNIT_ENTRIES {
                out.push(UnitPlan {
                    level,
                    variants: std::mem::take(&mut cur),
                });
            }
            cur.extend(o);
        }
        if !cur.is_empty() {
            out.push(UnitPlan {
                level,
                variants: cur,
            });
        }
    }
    out
}

/// The final codes of a solved unit, per metric and half.
struct Solved<'a> {
    layout: Layout<'a>,
    codes: [[Vec<u16>; 2]; 3],
}

/// The units solved so far, for the pawn moves of the ones still to solve.
#[derive(Default)]
struct Done<'a> {
    units: Vec<Option<Solved<'a>>>,
    level: Vec<u8>,
    /// Per unit: its DTZ50 is its DTZ.
    dtz50_same: Vec<bool>,
    by_variant: HashMap<Variant, usize>,
}

const MIRROR: Symmetry = Symmetry {
    mirror_files: true,
    mirror_ranks: false,
    transpose: false,
};

impl PushValues for Done<'_> {
    fn code(&self, metric: Metric, succ: &TbPosition) -> u16 {
        let sym = if succ.king(Color::White).file() >= 4 {
            MIRROR
        } else {
            Symmetry::default()
        };
        let u = self.by_variant[&Variant::of(succ, sym)];
        let s = self.units[u]
            .as_ref()
            .expect("a pawn move reaches a unit of the two levels below");
        let (h, i) = s.layout.encode(succ).expect("legal successor has an entry");
        let m = METRICS.iter().position(|&x| x == metric).expect("a metric");
        s.codes[m][h as usize][i as usize]
    }
}

/// The three metrics of an endgame with pawns in Nalimov order, solved unit by unit
/// (`plan`), DTZ50 always on its own with `full_dtz50`: each unit's values are put in their Nalimov entries as soon as it is solved, and
/// a unit is dropped once no unit left to solve can reach it (two levels below).
pub fn solve_all(
    index: &EndgameIndex,
    subs: &SubTables,
    full_dtz50: bool,
    on_unit: &(dyn Fn(usize, usize) + Sync),
) -> ([Work; 3], UnitTimes) {
    let mut times = UnitTimes::default();
    let m = index.material();
    let units = plan(&m);
    let out: [Work; 3] = std::array::from_fn(|_| {
        [Half::Wtm, Half::Btm].map(|h| {
            index.stored_halves().contains(&h).then(|| {
                (0..index.size(h))
                    .into_par_iter()
                    .map(|_| AtomicU16::new(RESOLVED | CODE_NONE))
                    .collect()
            })
        })
    });
    let mut done = Done::default();
    let none = |_: u32, _: u64| {};
    for (n, plan) in units.iter().enumerate() {
        on_unit(n, units.len());
        // Units three or more levels up can no longer be reached.
        for (u, l) in done.level.iter().enumerate() {
            if *l + 2 < plan.level {
                done.units[u] = None;
            }
        }
        let layout = Layout::of_unit(index, Unit::new(plan.variants.clone()));
        let solver = |metric| Solver::new(&layout, subs, metric, None).with_pushes(&done);
        let codes_of = |work: Work| -> [Vec<u16>; 2] {
            work.map(|h| {
                h.expect("both halves")
                    .into_iter()
                    .map(|a| a.into_inner() & !RESOLVED)
                    .collect()
            })
        };
        // DTM's and DTZ's init passes are one: a move's class and target serve both.
        let t = Instant::now();
        let (dtm_start, dtz_start) = solver(Metric::Dtm).init_dtm_dtz();
        let dtm = solver(Metric::Dtm).run(Some(dtm_start), &none);
        times.dtm += t.elapsed().as_secs_f64();
        let t = Instant::now();
        let dtz = solver(Metric::Dtz).run(Some(dtz_start), &none);
        times.dtz += t.elapsed().as_secs_f64();
        // DTZ50 is DTZ where nothing is deeper than 100 plies, the pushes reach units where
        // it is, and the sub-endgames' results the rule changes change no value here
        // (`Solver::dtz_holds_under_rule50`); else a solve of its own.
        let t = Instant::now();
        let below_same = (0..done.units.len())
            .filter(|&u| done.level[u] + 2 >= plan.level)
            .all(|u| done.dtz50_same[u]);
        let same = !full_dtz50
            && below_same
            && max_depth(&dtz) <= RULE50_PLIES
            && (subs.rule50_clean()
                || solver(Metric::Dtz50).dtz_holds_under_rule50(&dtz).is_some());
        let dtz = codes_of(dtz);
        let dtz50 = if same {
            dtz.clone()
        } else {
            codes_of(solver(Metric::Dtz50).run(None, &none))
        };
        times.dtz50 += t.elapsed().as_secs_f64();
        let codes = [codes_of(dtm), dtz, dtz50];
        let t = Instant::now();
        put_in_nalimov_order(index, &layout, &codes, &out);
        times.order += t.elapsed().as_secs_f64();
        let u = done.units.len();
        for v in &plan.variants {
            done.by_variant.insert(*v, u);
        }
        done.units.push(Some(Solved { layout, codes }));
        done.level.push(plan.level);
        done.dtz50_same.push(same);
    }
    (out, times)
}

/// Writes a unit's codes into their entries of Nalimov's index (the halves it stores).
fn put_in_nalimov_order(
    index: &EndgameIndex,
    layout: &Layout,
    codes: &[[Vec<u16>; 2]; 3],
    out: &[Work; 3],
) {
    const CHUNK: u64 = 1 << 12;
    for &h in index.stored_halves() {
        let size = layout.size(h);
        let dst = out
            .each_ref()
            .map(|w| w[h as usize].as_ref().expect("stored half"));
        (0..size.div_ceil(CHUNK)).into_par_iter().for_each(|c| {
            let mut frames = FrameCache::default();
            for idx in c * CHUNK..((c + 1) * CHUNK).min(size) {
                let i = idx as usize;
                if codes[0][h as usize][i] == CODE_NONE {
                    continue;
                }
                let pos = layout.decode_valid(h, idx);
                // An e.p. variant's position Nalimov's e.p. zone does not keep has no entry.
                let Some((nh, ni)) = frames.index_own(index, &pos) else {
                    debug_assert!(pos.ep.is_some());
                    continue;
                };
                debug_assert_eq!(nh, h);
                for (k, d) in dst.iter().enumerate() {
                    d[ni as usize].store(codes[k][h as usize][i] | RESOLVED, Relaxed);
                }
            }
        });
    }
}
