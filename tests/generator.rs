//! The retrograde generator end to end: every 3- and 4-man table is built into a temporary
//! directory and verified by forward minimax (zero disagreements), its largest DTM per side
//! matches Nalimov, Haworth, Heinz (2001) Table 8 (`tests/data/nalimov_max_dtm.csv`), and for
//! every entry DTZ <= DTM (plies), DTZ50 >= DTZ for wins, and the three metrics agree on who
//! wins wherever the 50-move rule does not turn a win into a draw.

use fortress::chess::Position;
use fortress::egtb::format::{Metric, Outcome, TbValue, SPAN_LOG2};
use fortress::egtb::generate::table8;
use fortress::egtb::generate::{
    gentb, open_subs, verify, Counting, Dtz50Method, GenOptions, Pulling, TableSummary,
};
use fortress::egtb::{EndgameIndex, EndgameTables, Half, Material};
use indicatif::ProgressBar;
use rayon::prelude::*;
use std::time::Instant;

#[path = "common/both_sides.rs"]
mod both_sides;
use both_sides::{read_metric, store_both_sides, write_metric};
#[path = "common/soundness.rs"]
mod soundness;

fn table8_csv(name: &str) -> Option<[Option<u16>; 4]> {
    // The CSV shipped in tests/data, read here independently of the library's copy.
    let csv = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/nalimov_max_dtm.csv"
    ))
    .expect("tests/data/nalimov_max_dtm.csv");
    csv.lines().skip(1).find_map(|l| {
        let f: Vec<&str> = l.split(',').collect();
        (f[0] == name).then(|| {
            let mut out = [None; 4];
            for (o, x) in out.iter_mut().zip(&f[1..]) {
                *o = x.trim().parse().ok();
            }
            out
        })
    })
}

/// Hashes (xxh3-64) of each metric's values at the legal entries, both stored halves in index
/// order, as the previous file format held them: `tests/data/values_3_4_men.csv`, taken from the
/// files of format 1 by a reader of its own. The tables of today's format must decode to the
/// same values.
fn value_hashes(name: &str) -> Option<[u64; 3]> {
    include_str!("data/values_3_4_men.csv")
        .lines()
        .skip(1)
        .find_map(|l| {
            let mut f = l.split(',');
            (f.next()? == name).then(|| {
                let mut h = f.map(|x| u64::from_str_radix(x, 16).expect("hex"));
                [(); 3].map(|_| h.next().expect("three hashes"))
            })
        })
}

/// The three values of every legal entry of `t`, both stored halves in index order (a side the
/// files leave out by one ply), read once and in parallel.
fn legal_values(dir: &std::path::Path, t: &EndgameTables) -> Vec<(Half, Vec<[TbValue; 3]>)> {
    let index = t.index();
    let subs = open_subs(std::iter::once(dir), &t.material()).expect("sub-endgames open");
    index
        .stored_halves()
        .iter()
        .map(|&half| {
            let values = (0..index.size(half))
                .into_par_iter()
                .filter(|&i| index.decode(half, i).is_some())
                .map_init(Position::startpos, |pos, i| {
                    t.values_by_one_ply(half, i, &subs[..], pos)
                        .expect("in range")
                })
                .collect();
            (half, values)
        })
        .collect()
}

/// The hashes of `legal_values` per metric, as `value_hashes` records them.
fn hashes(values: &[(Half, Vec<[TbValue; 3]>)]) -> [u64; 3] {
    let mut h = Metric::ALL.map(|_| xxhash_rust::xxh3::Xxh3::new());
    for v in values.iter().flat_map(|(_, v)| v) {
        for (h, v) in h.iter_mut().zip(v) {
            h.update(&v.raw().to_le_bytes());
        }
    }
    h.map(|h| h.digest())
}

fn hashes_of(dir: &std::path::Path, t: &EndgameTables) -> [u64; 3] {
    hashes(&legal_values(dir, t))
}

/// DTM in plies: wins are odd, losses even.
fn dtm_plies(o: Outcome) -> Option<u32> {
    match o {
        Outcome::Win(k) => Some(2 * k as u32 - 1),
        Outcome::Loss(k) => Some(2 * k as u32),
        _ => None,
    }
}

/// Legal entries checked and those whose three values break the metrics' relations.
fn check_metric_relations(t: &EndgameTables, values: &[(Half, Vec<[TbValue; 3]>)]) -> (u64, u64) {
    let (mut checked, mut bad) = (0u64, 0u64);
    for (h, values) in values {
        for (k, v) in values.iter().enumerate() {
            let [dtm, dtz, dtz50] = v.map(|v| v.outcome());
            checked += 1;
            let ok = match (dtm, dtz) {
                (Outcome::Win(_), Outcome::Win(z)) | (Outcome::Loss(_), Outcome::Loss(z)) => {
                    z as u32 <= dtm_plies(dtm).expect("decisive")
                }
                (Outcome::Draw, Outcome::Draw) => true,
                _ => false,
            } && match (dtz, dtz50) {
                (Outcome::Win(z), Outcome::Win(z50)) | (Outcome::Loss(z), Outcome::Loss(z50)) => {
                    z50 >= z && z50 <= 100
                }
                // The rule may only turn decisive results into draws.
                (_, Outcome::Draw) => true,
                _ => false,
            };
            if !ok {
                bad += 1;
                if bad < 5 {
                    eprintln!(
                        "{} {} legal entry {k}: dtm {dtm:?} dtz {dtz:?} dtz50 {dtz50:?}",
                        t.material(),
                        h.name()
                    );
                }
            }
        }
    }
    (checked, bad)
}

/// Build into `dir`, verify, no progress bar; `full_dtz50` forces the rule's own solve.
fn options(dir: &std::path::Path, full_dtz50: bool) -> GenOptions {
    GenOptions {
        full_dtz50,
        ..GenOptions::new(dir)
    }
}

#[test]
fn all_three_and_four_man_tables() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let opts = options(dir.path(), false);
    let targets: Vec<Material> = Material::all_up_to(4)
        .into_iter()
        .filter(|m| m.men() > 2)
        .collect();
    assert_eq!(targets.len(), 35);
    let start = Instant::now();
    let built: Vec<TableSummary> =
        gentb(&targets, &opts, &mut |s| eprintln!("{}", s.line())).expect("generation");
    eprintln!("all 3-4 man tables: {:.1} s", start.elapsed().as_secs_f64());
    assert_eq!(built.len(), 35);

    let mut failures = Vec::new();
    for s in &built {
        assert!(s.built);
        let v = s.verify.as_ref().expect("verified");
        assert_eq!(v.disagreements, 0, "{}", s.material);
        assert!(v.checked > 0);
        let name = s.material.to_string();
        let paper = table8_csv(&name).unwrap_or_else(|| panic!("{name} not in Table 8"));
        assert_eq!(
            table8(&s.material),
            Some(paper),
            "library's copy of Table 8"
        );
        if s.max_dtm() != paper {
            failures.push(format!("{name}: {:?} vs Table 8 {paper:?}", s.max_dtm()));
        }
        let t = EndgameTables::open(dir.path(), &s.material).expect("tables open");
        let values = legal_values(dir.path(), &t);
        let (checked, bad) = check_metric_relations(&t, &values);
        assert_eq!(checked, v.checked, "{name}");
        assert_eq!(bad, 0, "{name}: metric relations");
        // The header's deepest DTZ50 of each half, the left-out side's included, is the
        // deepest of its values: a verdict that trusts it skips no spoiled result.
        for (half, v) in &values {
            let deepest = v
                .iter()
                .filter_map(|[_, _, z50]| match z50.outcome() {
                    Outcome::Win(n) | Outcome::Loss(n) => Some(n),
                    _ => None,
                })
                .max()
                .unwrap_or(0);
            assert_eq!(t.dtz50_max_depth(*half), Some(deepest), "{name} {half:?}");
            // Each span's byte is the deepest of its legal entries' too, read through the
            // bound that the verdict trusts; deeper only in a span with broken entries, which
            // the writer leaves holding a neighbour's value.
            let index = t.index();
            let spans = index.size(*half).div_ceil(1 << SPAN_LOG2) as usize;
            let (mut deepest, mut broken) = (vec![0u16; spans], vec![false; spans]);
            let mut values = v.iter();
            for i in 0..index.size(*half) {
                let k = (i >> SPAN_LOG2) as usize;
                if index.decode(*half, i).is_none() {
                    broken[k] = true;
                    continue;
                }
                let [_, _, z50] = values.next().expect("a value per legal entry");
                if let Outcome::Win(n) | Outcome::Loss(n) = z50.outcome() {
                    deepest[k] = deepest[k].max(n);
                }
            }
            for k in 0..spans {
                let bound = t.dtz50_depth_bound(*half, (k as u64) << SPAN_LOG2);
                let d = deepest[k];
                let sound = bound == Some(d) || broken[k] && bound.is_some_and(|b| b > d);
                assert!(sound, "{name} {half:?} span {k}: {bound:?}, deepest {d}");
            }
        }
        let want = value_hashes(&name).unwrap_or_else(|| panic!("{name}: no recorded hashes"));
        if hashes(&values) != want {
            failures.push(format!("{name}: values differ from the recorded ones"));
        }
    }
    assert!(
        failures.is_empty(),
        "max DTM or values differ: {failures:#?}"
    );

    recognizers_hold_on_every_position(dir.path(), &built);

    // Running again keeps every table.
    let again = gentb(&targets, &opts, &mut |_| {}).expect("second run");
    assert!(again.iter().all(|s| !s.built));
    // Half::Wtm of a symmetric endgame is not stored.
    let kpkp = EndgameTables::open(dir.path(), &Material::parse("KPKP").unwrap()).unwrap();
    assert!(kpkp.value(Metric::Dtm, Half::Wtm, 0).is_none());
}

/// The bitmap solver (the one of six-man tables) gives every pawnless 3-4 man table exactly the
/// values recorded from the values solver (whose tables the other tests verify), with DTZ50
/// solved on its own like DTZ from DTM's mates and losses: with counters in both halves, what
/// the memory allows here (White's counted at a first check, where its many moves leave some
/// entries too many for a counter to hold; Black's, the side with less material, all started
/// before the first pass), each pass's wins found as it costs least; and with none
/// (`--no-counters`, the other half of KQRKBN's solves), every pass's wins pulled (the moves
/// of the entries left open instead of the un-moves from the losses). The second way runs on
/// one endgame of each kind, with their sub-endgames: like men (KBBK), the same men on both
/// sides (KQKQ, one half stored), wins for both sides (KQKR), a long win against a minor
/// piece (KRKN); the whole set would add a minute and a half to the tests.
#[test]
fn bitmap_solver_gives_the_recorded_values() {
    let every: Vec<Material> = Material::all_up_to(4)
        .into_iter()
        .filter(|m| m.men() > 2 && !m.has_pawns())
        .collect();
    let kinds: Vec<Material> = ["KBBK", "KQKQ", "KQKR", "KRKN"]
        .iter()
        .map(|s| Material::parse(s).expect("endgame"))
        .collect();
    for (counting, pulling, targets) in [
        (Counting::WhereMemoryAllows, Pulling::Chosen, every),
        (Counting::Off, Pulling::Always, kinds),
    ] {
        let dir = tempfile::tempdir().expect("temporary directory");
        let opts = GenOptions {
            bitmaps: true,
            counting,
            pulling,
            verify: false,
            ..options(dir.path(), true)
        };
        let built = gentb(&targets, &opts, &mut |s| eprintln!("{}", s.line())).expect("generation");
        for m in &targets {
            assert!(built.iter().any(|s| s.material == *m), "{m} built");
        }
        let mut failures = Vec::new();
        for s in &built {
            assert!(s.built);
            let name = s.material.to_string();
            let t = EndgameTables::open(dir.path(), &s.material).expect("tables open");
            if Some(hashes_of(dir.path(), &t)) != value_hashes(&name) {
                failures.push(name);
            }
        }
        assert!(
            failures.is_empty(),
            "{counting:?}, {pulling:?}: values differ: {failures:?}"
        );
    }
}

/// The solver by pawn structure (the one of six-man endgames with pawns) gives every 3-4 man
/// endgame with pawns exactly the values recorded from the values solver, with DTZ50 taken
/// from DTZ where the rule cannot change it and, in a second build, always solved on its own.
#[test]
fn structure_solver_gives_the_recorded_values() {
    let targets: Vec<Material> = Material::all_up_to(4)
        .into_iter()
        .filter(|m| m.men() > 2 && m.has_pawns())
        .collect();
    assert_eq!(targets.len(), 11);
    let dir = tempfile::tempdir().expect("temporary directory");
    let pawnless: Vec<Material> = Material::all_up_to(4)
        .into_iter()
        .filter(|m| m.men() > 2 && !m.has_pawns())
        .collect();
    let sub_opts = GenOptions {
        verify: false,
        ..options(dir.path(), false)
    };
    gentb(&pawnless, &sub_opts, &mut |_| {}).expect("pawnless tables");
    for full_dtz50 in [false, true] {
        // The second build replaces the first one's tables.
        let opts = GenOptions {
            structures: true,
            verify: false,
            force: true,
            ..options(dir.path(), full_dtz50)
        };
        let built = gentb(&targets, &opts, &mut |s| eprintln!("{}", s.line())).expect("generation");
        let mut failures = Vec::new();
        let mut checked = 0;
        for s in built.iter().filter(|s| s.material.has_pawns()) {
            assert!(s.built);
            let name = s.material.to_string();
            let t = EndgameTables::open(dir.path(), &s.material).expect("tables open");
            if Some(hashes_of(dir.path(), &t)) != value_hashes(&name) {
                failures.push(name);
            }
            checked += 1;
        }
        assert_eq!(checked, targets.len());
        assert!(
            failures.is_empty(),
            "full DTZ50 {full_dtz50}: values differ: {failures:?}"
        );
    }
}

/// Where DTZ runs deeper than the rule and every sub-endgame is clean, the bitmap solver makes
/// DTZ50 from DTZ's own values, capped at 100 plies, rather than putting it together from its
/// depth log: KBBKN (DTZ 99 moves) gets the same codes at every legal entry, the same DTM file
/// and the same summary from both solvers, the bitmap solver with counters in both halves.
#[test]
fn bitmap_solver_caps_dtz_as_the_values_solver_does() {
    let kbbkn = Material::parse("KBBKN").unwrap();
    let by_values = tempfile::tempdir().expect("temporary directory");
    let values_opts = GenOptions {
        verify: false,
        ..options(by_values.path(), false)
    };
    let built = gentb(&[kbbkn], &values_opts, &mut |_| {}).expect("values solver");
    let from_values = built.last().expect("KBBKN built");
    let by_bitmaps = tempfile::tempdir().expect("temporary directory");
    let bitmap_opts = GenOptions {
        dir: by_bitmaps.path().to_path_buf(),
        bitmaps: true,
        force: true,
        also: vec![by_values.path().to_path_buf()],
        ..values_opts.clone()
    };
    let built = gentb(&[kbbkn], &bitmap_opts, &mut |_| {}).expect("bitmap solver");
    let from_bitmaps = built.last().expect("KBBKN");
    assert_eq!(from_bitmaps.material, kbbkn);
    assert_eq!(
        built.iter().filter(|s| s.built).count(),
        1,
        "only KBBKN is built again, its sub-endgames are found"
    );
    assert_eq!(from_values.dtz50, Dtz50Method::DtzCapped);
    assert_eq!(from_bitmaps.dtz50, Dtz50Method::DtzCapped);
    assert_eq!(
        format!("{:?}", from_bitmaps.halves),
        format!("{:?}", from_values.halves)
    );
    let wins_drawn: u64 = from_bitmaps
        .halves
        .iter()
        .flatten()
        .map(|h| h.dtz50_draws_of_wins)
        .sum();
    assert!(wins_drawn > 0, "the rule draws some of KBBKN's wins");
    // Both solvers record DTZ50's depths by span of both halves, the side their files leave
    // out included, and the same bytes but where a span holds broken entries (which hold a
    // neighbour's value, not always the same one).
    let [b, v] = [by_bitmaps.path(), by_values.path()]
        .map(|d| EndgameTables::open(d, &kbbkn).expect("KBBKN opens"));
    let index = EndgameIndex::new(&kbbkn);
    for h in Half::BOTH {
        for t in [&b, &v] {
            let spans = t.file(Metric::Dtz50).expect("DTZ50").header().depth_spans;
            assert!(spans[h as usize].is_some(), "{spans:?}");
        }
        for k in 0..index.size(h).div_ceil(1 << SPAN_LOG2) {
            let first = k << SPAN_LOG2;
            let [db, dv] = [&b, &v].map(|t| t.dtz50_depth_bound(h, first));
            let end = (first + (1 << SPAN_LOG2)).min(index.size(h));
            let broken = || (first..end).any(|i| index.decode(h, i).is_none());
            assert!(db == dv || broken(), "{h:?} span {k}: {db:?} and {dv:?}");
        }
    }
    // The same stored codes at every legal entry, in every file: the results, DTM's and DTZ's
    // depths, DTZ50's differences. The files may differ where entries are broken (don't-care
    // codes, stored as a neighbour's): the bitmap solver writes the results and the
    // depth-coded distances straight from its values, the values solver from its files.
    let index = EndgameIndex::new(&kbbkn);
    for metric in [Metric::Wdl, Metric::Dtm, Metric::Dtz, Metric::Dtz50] {
        let name = format!("KBBKN.{}.ftb", metric.name());
        let [b, v] = [by_bitmaps.path(), by_values.path()]
            .map(|d| fortress::egtb::format::TableFile::open(&d.join(&name)).expect("table file"));
        for &half in index.stored_halves() {
            let n = index.size(half);
            let (mut codes_b, mut codes_v) = (Vec::new(), Vec::new());
            let stored_b = b.read_range(half, 0..n, &mut codes_b).is_some();
            let stored_v = v.read_range(half, 0..n, &mut codes_v).is_some();
            assert_eq!(stored_b, stored_v, "{name}: half {} kept", half.name());
            let differ = (0..n)
                .into_par_iter()
                .filter(|&i| {
                    stored_b
                        && codes_b[i as usize] != codes_v[i as usize]
                        && index.decode(half, i).is_some()
                })
                .count();
            assert_eq!(differ, 0, "{name}: half {}", half.name());
        }
    }
    let header = |dir: &std::path::Path, metric: Metric| {
        let name = format!("KBBKN.{}.ftb", metric.name());
        fortress::egtb::format::TableFile::open(&dir.join(name))
            .expect("table file")
            .header()
            .clone()
    };
    let [b, v] = [by_bitmaps.path(), by_values.path()].map(|d| header(d, Metric::Dtm));
    assert_eq!(b.payload_hash, v.payload_hash, "DTM's file");
    let [b, v] = [by_bitmaps.path(), by_values.path()].map(|d| header(d, Metric::Dtz50));
    assert_eq!(
        (b.flags, b.max_depths, b.entries),
        (v.flags, v.max_depths, v.entries),
        "DTZ50's header"
    );
}

/// Issue #7: every claim of the recognizers, on every position of every 3-4 man table, each
/// colouring, holds for the table's result. The fence detector makes no claim here (its marks
/// cannot span eight files with three pawns), so the figures of `tests/recognize.rs` test it;
/// the material recognizers give exact values on every KPK position and on many of KBPK (the
/// wrong bishop), KNNK and the minor-piece endgames, and a bare king's bound everywhere.
fn recognizers_hold_on_every_position(dir: &std::path::Path, built: &[TableSummary]) {
    let start = Instant::now();
    let mut claims = std::collections::HashMap::new();
    for s in built {
        let t = EndgameTables::open(dir, &s.material).expect("tables open");
        let r = soundness::check(&t);
        eprintln!(
            "{}: {} positions, claims: exact {}, bare king {}, blockage {}, insufficient material {}; wrong {}",
            s.material, r.positions, r.exact, r.bare, r.blockage, r.dead, r.wrong
        );
        assert_eq!(r.wrong, 0, "{}: {:#?}", s.material, r.examples);
        claims.insert(s.material.to_string(), r);
    }
    eprintln!(
        "recognizers against the tables: {:.1} s",
        start.elapsed().as_secs_f64()
    );
    // The check has something to check: the bitbase answers every legal KPK position, and the
    // other recognizers speak where they should.
    let kpk = &claims["KPK"];
    assert_eq!(kpk.exact, kpk.positions);
    for name in ["KBPK", "KNNK", "KBK", "KNK", "KBBK", "KBKB"] {
        assert!(claims[name].exact > 0, "{name}");
    }
    for name in ["KQK", "KRPK", "KBNK"] {
        assert!(claims[name].bare > 0, "{name}");
    }
    for name in ["KBK", "KNK", "KBBK", "KBKB"] {
        assert!(claims[name].dead > 0, "{name}");
    }
}

/// The 3-4 man tables never need the 50-move rule's own solve (no DTZ exceeds 100 plies and no
/// sub-endgame has a rule-50 draw), so it is forced here on an endgame with pawn moves and
/// promotions, and checked by the independent verifier and against DTZ.
#[test]
fn dtz50_solver_agrees_with_dtz_where_the_rule_cannot_bite() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let opts = options(dir.path(), true);
    // KPK keeps this quick (pawn moves, promotions: solved by pawn level); KBNK has a solve of
    // its own. Run once on KPKP and KRKP (with their 18 sub-endgames, e.p. included) it gave
    // the same agreement.
    let targets: Vec<Material> = ["KPK", "KBNK"]
        .iter()
        .map(|n| Material::parse(n).unwrap())
        .collect();
    let built = gentb(&targets, &opts, &mut |s| eprintln!("{}", s.line())).expect("generation");
    for s in &built {
        assert_eq!(s.verify.as_ref().expect("verified").disagreements, 0);
        assert!(
            matches!(s.dtz50, Dtz50Method::Solved | Dtz50Method::ByPawnLevel(_)),
            "{}",
            s.material
        );
        let t = EndgameTables::open(dir.path(), &s.material).expect("tables open");
        let index = t.index();
        for &h in index.stored_halves() {
            for i in 0..index.size(h) {
                assert_eq!(
                    t.value(Metric::Dtz, h, i),
                    t.value(Metric::Dtz50, h, i),
                    "{} {} #{i}",
                    s.material,
                    h.name()
                );
            }
        }
    }
}

/// Rewrites `m`'s DTZ50 file with every win and loss drawn, and its WDL file to match: a
/// stand-in for a sub-endgame whose results the 50-move rule changes (no 3-4 man endgame has
/// one). Its DTZ and DTZ50 are stored for both sides first: the WDL file is written from DTZ50.
fn draw_dtz50(dir: &std::path::Path, m: &Material) {
    store_both_sides(dir, m);
    let dtz = read_metric(dir, m, Metric::Dtz);
    let halves: Vec<(Half, Vec<TbValue>)> = read_metric(dir, m, Metric::Dtz50)
        .into_iter()
        .map(|(h, v)| {
            let drawn = v
                .into_iter()
                .map(|x| match x.outcome() {
                    Outcome::Win(_) | Outcome::Loss(_) => TbValue::DRAW,
                    _ => x,
                })
                .collect();
            (h, drawn)
        })
        .collect();
    // The WDL file is written from DTZ and DTZ50 values for both sides.
    write_metric(dir, m, Metric::Dtz, &dtz);
    write_metric(dir, m, Metric::Dtz50, &halves);
    fortress::egtb::generate::finish::write_wdl(dir, m).expect("WDL file written");
}

/// DTZ50 taken from DTZ where a sub-endgame's results differ under the rule
/// (`Dtz50Method::Checked`) must equal the rule's own solve. KPK's sub-endgames KQK, then KRK
/// too, get DTZ50 files with every result drawn: with KQK alone a promotion to a rook still
/// wins wherever one to a queen did, so DTZ stands (12,741 entries checked); with both, every
/// promotion draws and KPK's DTZ50 must be solved. (KRK alone is no such case: three KPK wins
/// need the rook, the queen stalemating.)
#[test]
fn dtz50_from_dtz_when_changed_sub_results_change_nothing() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let kpk = Material::parse("KPK").unwrap();
    let build = |full: bool| {
        let opts = GenOptions {
            force: true,
            ..options(dir.path(), full)
        };
        let s = gentb(&[kpk], &opts, &mut |s| eprintln!("{}", s.line())).expect("generation");
        let s = s.last().expect("KPK built").clone();
        assert_eq!(s.verify.as_ref().expect("verified").disagreements, 0);
        (s.dtz50, read_metric(dir.path(), &kpk, Metric::Dtz50))
    };
    build(false);
    let dtz = read_metric(dir.path(), &kpk, Metric::Dtz);
    for (sub, drawn_wins) in [("KQK", false), ("KRK", true)] {
        draw_dtz50(dir.path(), &Material::parse(sub).unwrap());
        let (method, dtz50) = build(false);
        let (full_method, full) = build(true);
        assert!(matches!(full_method, Dtz50Method::ByPawnLevel(_)));
        assert_eq!(dtz50, full, "after drawing {sub}");
        if drawn_wins {
            assert!(matches!(method, Dtz50Method::ByPawnLevel(_)), "{method:?}");
            assert_ne!(dtz50, dtz);
        } else {
            assert!(
                matches!(method, Dtz50Method::Checked(n) if n > 0),
                "{method:?}"
            );
            assert_eq!(dtz50, dtz);
        }
    }
}

/// A verification in rounds that was stopped goes on after the rounds its record says were
/// done, taking their counts and seconds from it; a record of other files is ignored.
#[test]
fn a_stopped_verification_goes_on_where_it_was() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let opts = GenOptions {
        verify: false,
        ..options(dir.path(), false)
    };
    let krk = Material::parse("KRK").unwrap();
    gentb(&[krk], &opts, &mut |_| {}).expect("generation");
    // Rounds are the six-man verification, and six-man files store both sides to move.
    store_both_sides(dir.path(), &krk);
    let own = EndgameTables::open(dir.path(), &krk).unwrap();
    let checkpoint = dir.path().join(".KRK.verify");
    let run = |record: Option<String>| {
        if let Some(text) = record {
            std::fs::write(&checkpoint, text).unwrap();
        }
        let r = verify::verify_by_halves(&own, &[], &ProgressBar::hidden(), &checkpoint);
        assert!(
            !checkpoint.exists(),
            "a finished verification leaves no record"
        );
        r.unwrap().expect("KRK's values fit the packing")
    };
    let key = |dtm: u64| {
        let hash = |m: Metric| own.header(m).payload_hash;
        format!(
            "fortress verify KRK {dtm:016x} {:016x} {:016x}\n",
            hash(Metric::Dtz),
            hash(Metric::Dtz50)
        )
    };
    let dtm = own.header(Metric::Dtm).payload_hash;
    let full = run(None);
    assert!(full.checked > 0 && full.disagreements == 0);
    assert_eq!(full.earlier_seconds, 0.0);
    // Round 1 recorded with nothing checked: the run skips it.
    let without_first = run(Some(key(dtm) + "round 1 0 0 0 12.5\n"));
    assert!(
        without_first.checked < full.checked,
        "round 1 checks something"
    );
    assert_eq!(without_first.earlier_seconds, 12.5);
    // Its counts are the record's.
    let recorded = run(Some(key(dtm) + "round 1 7 3 1 12.5\n"));
    assert_eq!(recorded.checked, without_first.checked + 7);
    assert_eq!(recorded.broken, without_first.broken + 3);
    assert_eq!(recorded.disagreements, 1);
    // A record of other files counts for nothing.
    let stale = run(Some(key(dtm ^ 1) + "round 1 0 0 0 12.5\n"));
    assert_eq!(
        (stale.checked, stale.broken, stale.earlier_seconds),
        (full.checked, full.broken, 0.0)
    );
}

/// The verifier is only worth its zero if it can see one wrong entry: a single DTM, DTZ or
/// DTZ50 value of a correct KRK table is made one unit deeper, the file rewritten (with a valid
/// checksum) and the verifier must report exactly that disagreement, or more (its neighbours
/// may disagree too), never zero.
#[test]
fn verifier_sees_one_wrong_entry() {
    use fortress::egtb::generate::verify_endgame;
    let dir = tempfile::tempdir().expect("temporary directory");
    let opts = options(dir.path(), false);
    let krk = Material::parse("KRK").unwrap();
    gentb(&[krk], &opts, &mut |_| {}).expect("generation");
    // A span of DTZ50's depths made shallower than its entries (checksums made valid again).
    let path = dir.path().join("KRK.dtz50.ftb");
    let original = std::fs::read(&path).unwrap();
    let u64_at = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    let spans_at = u64_at(&original, 176) as usize;
    assert!(spans_at > 0, "KRK's DTZ50 file records its depths by span");
    let k = (spans_at..original.len())
        .find(|&k| original[k] > 1)
        .expect("a span with a win or a loss");
    let mut shallow = original.clone();
    shallow[k] -= 1;
    let payload_hash = xxhash_rust::xxh3::xxh3_64(&shallow[256..]);
    shallow[160..168].copy_from_slice(&payload_hash.to_le_bytes());
    let header_hash = xxhash_rust::xxh3::xxh3_64(&shallow[..248]);
    shallow[248..256].copy_from_slice(&header_hash.to_le_bytes());
    std::fs::write(&path, &shallow).unwrap();
    let r = verify_endgame(&opts, &krk).unwrap();
    assert!(r.disagreements >= 1, "a span shallower than its entries");
    std::fs::write(&path, &original).unwrap();
    assert_eq!(verify_endgame(&opts, &krk).unwrap().disagreements, 0);
    // As built, DTZ is stored for one side: a wrong value there is seen (through the side
    // worked out by one ply, whose moves lead to it).
    let missing = EndgameTables::open(dir.path(), &krk)
        .unwrap()
        .zeroing_missing()
        .expect("KRK's DTZ is stored for one side");
    let (stored, values) = read_metric(dir.path(), &krk, Metric::Dtz)
        .into_iter()
        .find(|(h, _)| *h != missing)
        .expect("the stored side");
    let mut wrong = values.clone();
    let i = (0..wrong.len())
        .find(|&i| {
            EndgameIndex::new(&krk).decode(stored, i as u64).is_some()
                && matches!(wrong[i].outcome(), Outcome::Win(n) | Outcome::Loss(n) if n > 2)
        })
        .expect("KRK has wins and losses");
    wrong[i] = TbValue::from_raw(wrong[i].raw() + 2);
    write_metric(dir.path(), &krk, Metric::Dtz, &[(stored, wrong)]);
    let r = verify_endgame(&opts, &krk).unwrap();
    assert!(r.disagreements >= 1, "a wrong DTZ of the stored side");
    write_metric(dir.path(), &krk, Metric::Dtz, &[(stored, values)]);
    assert_eq!(verify_endgame(&opts, &krk).unwrap().disagreements, 0);
    store_both_sides(dir.path(), &krk);
    // The check half by half (six-man tables too large to hold decompressed) sees what the
    // check of the whole table sees.
    let checkpoint = dir.path().join(".KRK.verify");
    let by_halves = || {
        let own = EndgameTables::open(dir.path(), &krk).unwrap();
        let r = verify::verify_by_halves(&own, &[], &ProgressBar::hidden(), &checkpoint);
        assert!(
            !checkpoint.exists(),
            "a finished verification leaves no record"
        );
        r.unwrap().expect("KRK's values fit the packing")
    };
    let r = verify_endgame(&opts, &krk).unwrap();
    assert_eq!(r.disagreements, 0);
    let h = by_halves();
    assert_eq!(
        (h.checked, h.broken, h.disagreements),
        (r.checked, r.broken, 0)
    );
    // The progress shown covers every entry of both halves, once.
    let index = EndgameIndex::new(&krk);
    let entries: u64 = index.stored_halves().iter().map(|&h| index.size(h)).sum();
    assert_eq!(r.checked + r.broken, entries);
    assert_eq!(opts.progress.length(), Some(entries));
    assert_eq!(opts.progress.position(), entries);
    for metric in Metric::ALL {
        let halves = read_metric(dir.path(), &krk, metric);
        let original = halves.clone();
        let mut halves = halves;
        // The first win of the Wtm half (at a legal entry: broken ones hold their
        // neighbours' values), one deeper.
        let (_, wtm) = &mut halves[0];
        let i = (0..wtm.len())
            .find(|&i| {
                index.decode(Half::Wtm, i as u64).is_some()
                    && matches!(wtm[i].outcome(), Outcome::Win(n) if n > 2)
            })
            .expect("KRK has wins");
        let Outcome::Win(n) = wtm[i].outcome() else {
            unreachable!()
        };
        wtm[i] = TbValue::win(n + 1).unwrap();
        let write = |h: &[(Half, Vec<TbValue>)]| write_metric(dir.path(), &krk, metric, h);
        write(&halves);
        let r = verify_endgame(&opts, &krk).unwrap();
        assert!(
            r.disagreements >= 1,
            "{}: a wrong entry went unseen",
            metric.name()
        );
        assert_eq!(
            by_halves().disagreements,
            r.disagreements,
            "{}",
            metric.name()
        );
        write(&original);
        let r = verify_endgame(&opts, &krk).unwrap();
        assert_eq!(r.disagreements, 0, "{}: {:?}", metric.name(), r.examples);
    }
}

/// DTM for one side to move, as five-man tables store it, tried on three-man tables (whose own
/// files keep both sides): KQK and KRK cut to the side their DTZ keeps still give their
/// recorded values at every entry (the other side by one ply), the verifier agrees with them
/// and sees a wrong DTM of the side kept, and KPK, whose promotions reach them, builds over
/// them to its recorded values.
#[test]
fn dtm_of_one_side_to_move_reads_verifies_and_builds() {
    use fortress::egtb::format::{file_name, keep_half};
    use fortress::egtb::generate::verify_endgame;
    let dir = tempfile::tempdir().expect("temporary directory");
    let opts = options(dir.path(), false);
    let promoted: Vec<Material> = ["KQK", "KRK", "KBK", "KNK"]
        .iter()
        .map(|n| Material::parse(n).unwrap())
        .collect();
    let quick = GenOptions {
        verify: false,
        ..GenOptions::new(dir.path())
    };
    gentb(&promoted, &quick, &mut |_| {}).expect("generation");
    let mut reached = false;
    for m in &promoted[..2] {
        let t = EndgameTables::open(dir.path(), m).unwrap();
        let missing = t.zeroing_missing().expect("DTZ of one side");
        assert_eq!(t.dtm_missing(), None, "{m}: three men keep DTM's two sides");
        let kept = Half::BOTH.into_iter().find(|&h| h != missing).unwrap();
        drop(t);
        keep_half(&dir.path().join(file_name(m, Metric::Dtm)), kept).unwrap();
        let t = EndgameTables::open(dir.path(), m).unwrap();
        assert_eq!(t.dtm_missing(), Some(missing), "{m}");
        assert!(t.value(Metric::Dtm, missing, 0).is_none());
        // White's promotions in KPK reach positions with Black to move.
        reached |= missing == Half::Btm;
        let name = m.to_string();
        assert_eq!(
            Some(hashes_of(dir.path(), &t)),
            value_hashes(&name),
            "{name}: values by one ply against the recorded ones"
        );
        assert_eq!(verify_endgame(&opts, m).unwrap().disagreements, 0, "{name}");
    }
    assert!(reached, "KPK's promotions reach no side left out");
    // A wrong DTM of the side kept is seen, through the side worked out from it.
    let kqk = promoted[0];
    let missing = EndgameTables::open(dir.path(), &kqk)
        .unwrap()
        .dtm_missing()
        .unwrap();
    let (kept, values) = read_metric(dir.path(), &kqk, Metric::Dtm)
        .into_iter()
        .find(|(h, _)| *h != missing)
        .unwrap();
    let mut wrong = values.clone();
    let i = (0..wrong.len())
        .find(|&i| {
            EndgameIndex::new(&kqk).decode(kept, i as u64).is_some()
                && matches!(wrong[i].outcome(), Outcome::Win(n) | Outcome::Loss(n) if n > 2)
        })
        .expect("KQK has wins and losses");
    wrong[i] = TbValue::from_raw(wrong[i].raw() + 2);
    write_metric(dir.path(), &kqk, Metric::Dtm, &[(kept, wrong)]);
    assert!(verify_endgame(&opts, &kqk).unwrap().disagreements >= 1);
    write_metric(dir.path(), &kqk, Metric::Dtm, &[(kept, values)]);
    assert_eq!(verify_endgame(&opts, &kqk).unwrap().disagreements, 0);
    // A build whose promotions reach the sides left out.
    let kpk = Material::parse("KPK").unwrap();
    let built = gentb(&[kpk], &opts, &mut |_| {}).expect("generation");
    let s = built.iter().find(|s| s.material == kpk).unwrap();
    assert!(s.built);
    assert_eq!(s.verify.as_ref().unwrap().disagreements, 0);
    let t = EndgameTables::open(dir.path(), &kpk).unwrap();
    assert_eq!(Some(hashes_of(dir.path(), &t)), value_hashes("KPK"));
}

/// DTM of the side a file leaves out, worked out a run of one man's squares at a time
/// (`EndgameTables::dtm_by_runs`, as a six-man build reads its five-man sub-tables), is the
/// DTM the file held before, at every valid entry, each entry once: the run's man the side to
/// move's, or the other side's where the side to move has only its king.
#[test]
fn dtm_left_out_worked_out_by_runs_is_the_one_stored() {
    use fortress::egtb::format::{file_name, keep_half};
    use fortress::egtb::play::tables::DtmRuns;
    let mut movers = [false; 2];
    for name in ["KRKN", "KQRK", "KBNK", "KQKR"] {
        let dir = tempfile::tempdir().expect("temporary directory");
        let m = Material::parse(name).unwrap();
        let quick = GenOptions {
            verify: false,
            ..GenOptions::new(dir.path())
        };
        gentb(&[m], &quick, &mut |_| {}).expect("generation");
        let half = EndgameTables::open(dir.path(), &m)
            .unwrap()
            .zeroing_missing()
            .expect("DTZ of one side");
        let (kept, stored): (Vec<_>, Vec<_>) = read_metric(dir.path(), &m, Metric::Dtm)
            .into_iter()
            .partition(|(h, _)| *h != half);
        let (kept, stored) = (kept[0].0, &stored[0].1);
        keep_half(&dir.path().join(file_name(&m, Metric::Dtm)), kept).unwrap();
        let t = EndgameTables::open(dir.path(), &m).unwrap();
        assert_eq!(t.dtm_missing(), Some(half), "{name}");
        let subs = open_subs(std::iter::once(dir.path()), &m).unwrap();
        let man = t.run_man(half).expect("a man of one of a kind");
        movers[(man.0 == half.stm()) as usize] = true;
        let index = t.index();
        let mut seen = vec![0u8; index.size(half) as usize];
        let (mut valid, mut decided) = (0u64, 0u64);
        let mut runs = DtmRuns::default();
        let zone = 0..index.zones(half).0;
        t.dtm_by_runs(half, zone, man, &subs[..], &mut runs, |i, v| {
            seen[i as usize] += 1;
            if index.decode(half, i).is_some() {
                assert_eq!(v, Some(stored[i as usize]), "{name}, entry {i}");
                valid += 1;
                decided +=
                    matches!(v.unwrap().outcome(), Outcome::Win(_) | Outcome::Loss(_)) as u64;
            }
        });
        assert!(seen.iter().all(|&n| n == 1), "{name}: every entry once");
        assert!(
            decided > 10_000 && valid > decided,
            "{name}: {decided} of {valid}"
        );
    }
    assert_eq!(movers, [true; 2], "men of both sides ran");
}
