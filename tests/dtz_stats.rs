//! `egtb::report::dtz_stats::scan` against brute force. KQKR and KRKR are built; KQKR's DTZ50 file is
//! rewritten so that the 50-move rule draws some wins and delays others (no 3-4 man endgame has
//! either). The scan's figures must equal those counted over the decoded entries through the
//! probe (twins, the two entries Nalimov's index gives some positions, must agree), and its win
//! counts must be `tbinfo`'s.

use fortress::chess::Color;
#[path = "common/both_sides.rs"]
mod both_sides;
use both_sides::{read_metric, write_metric};
use fortress::chess::Position;
use fortress::egtb::format::{Metric, Outcome, TbValue};
use fortress::egtb::generate::{gentb, open_subs, GenOptions};
use fortress::egtb::report::dtz_stats::{scan, Deepest, WinStats};
use fortress::egtb::report::info::tbinfo;
use fortress::egtb::{EndgameTables, Half, Material, Symmetry, TbPosition};
use rayon::prelude::*;
use std::path::Path;
use std::time::Instant;

/// A position's key, the same for all its symmetric images: the smallest of their bitboards.
fn class_key(pos: &TbPosition, pawns: bool) -> [u64; 12] {
    Symmetry::group(pawns)
        .into_iter()
        .map(|s| {
            let p = pos.transformed(s);
            let mut k = [0u64; 12];
            for (i, b) in p.pieces.iter().flatten().enumerate() {
                k[i] = b.0;
            }
            k
        })
        .min()
        .expect("the group holds the identity")
}

/// The depth in plies of an outcome that `winner` wins, seen by `stm`.
fn won_by(o: Outcome, stm: Color, winner: Color) -> Option<u16> {
    match o {
        Outcome::Win(n) if stm == winner => Some(n),
        Outcome::Loss(n) if stm != winner => Some(n),
        _ => None,
    }
}

/// The deepest of `depths` (plies) in the winner's moves, with the positions at it.
fn deepest(depths: impl Iterator<Item = u16> + Clone, loser_to_move: bool) -> Option<Deepest> {
    let in_moves = |p: u16| if loser_to_move { p / 2 } else { p.div_ceil(2) };
    let moves = depths.clone().map(in_moves).max()?;
    let at = depths.filter(|&p| in_moves(p) == moves);
    Some(Deepest {
        moves,
        positions: at.clone().count() as u64,
        plies: at.max().expect("one at the maximum"),
    })
}

/// Per half: the figures of each winner counted over entries, and the entries that the side
/// to move wins.
fn brute_force(t: &EndgameTables, subs: &[EndgameTables]) -> [([WinStats; 2], u64); 2] {
    let index = t.index();
    let pawns = t.material().has_pawns();
    Half::BOTH.map(|h| {
        let stm = h.stm();
        // Every entry of the half, including the Wtm half of a symmetric endgame, which
        // decodes to the colour-flipped positions and is probed through the flip.
        let entries: Vec<([u64; 12], (Outcome, Outcome))> = (0..index.size(h))
            .into_par_iter()
            .map_init(Position::startpos, |scratch, i| {
                let pos = index.decode(h, i)?;
                let (ph, pi) = t.entry(&pos).expect("a decoded position has an entry");
                let [_, dtz, dtz50] = t
                    .values_by_one_ply(ph, pi, subs, scratch)
                    .expect("a decoded position probes");
                Some((class_key(&pos, pawns), (dtz.outcome(), dtz50.outcome())))
            })
            .flatten()
            .collect();
        let won_entries = entries
            .iter()
            .filter(|e| matches!(e.1 .0, Outcome::Win(_)))
            .count() as u64;
        let mut sorted = entries.clone();
        sorted.par_sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let twins = sorted.windows(2).filter(|w| w[0].0 == w[1].0);
        assert!(twins.clone().all(|w| w[0].1 == w[1].1), "twins differ");
        assert!(twins.count() > 0, "the index has twins");
        let positions: Vec<(Outcome, Outcome)> = entries.into_iter().map(|e| e.1).collect();
        let stats = Color::BOTH.map(|winner| {
            let won: Vec<(u16, Option<u16>)> = positions
                .iter()
                .filter_map(|&(z, z50)| Some((won_by(z, stm, winner)?, won_by(z50, stm, winner))))
                .collect();
            let won50 = positions
                .iter()
                .filter_map(|&(_, z50)| won_by(z50, stm, winner));
            WinStats {
                wins: won.len() as u64,
                max_dtz: deepest(won.iter().map(|w| w.0), winner != stm),
                max_dtz50: deepest(won50, winner != stm),
                drawn_by_rule50: won.iter().filter(|w| w.1.is_none()).count() as u64,
                delayed_by_rule50: won.iter().filter(|w| w.1 > Some(w.0)).count() as u64,
            }
        });
        (stats, won_entries)
    })
}

/// The scan equals brute force for every side to move and winner, and its wins are tbinfo's,
/// with the same deepest DTZ in plies.
fn check(dir: &Path, m: &Material) -> fortress::egtb::report::dtz_stats::EndgameStats {
    let t = EndgameTables::open(dir, m).expect("tables open");
    let subs = open_subs(std::iter::once(dir), m).expect("sub-endgames open");
    let stats = scan(&t, &subs).expect("sub-endgames present");
    let info = tbinfo(&m.to_string(), dir, true).expect("tbinfo");
    let info = info.stats.expect("files scanned");
    for (h, (brute, won_entries)) in Half::BOTH.into_iter().zip(brute_force(&t, &subs)) {
        for winner in Color::BOTH {
            assert_eq!(
                *stats.get(h, winner),
                brute[winner.index()],
                "{m} {} {winner:?} wins",
                h.name()
            );
        }
        let stm_wins = stats.get(h, h.stm());
        let entries = &info[h as usize];
        assert_eq!(entries.wins, won_entries, "{m} {}: tbinfo's wins", h.name());
        assert_eq!(stm_wins.wins, entries.wins, "{m}: tbinfo's wins");
        // tbinfo reads the files alone: a side they leave out has no DTZ figures there.
        if t.zeroing_missing() != Some(h) {
            assert_eq!(
                stm_wins.max_dtz.map(|d| d.plies),
                entries.max_win[Metric::Dtz as usize - 1]
            );
        } else {
            assert_eq!(entries.max_win[Metric::Dtz as usize - 1], None);
        }
    }
    stats
}

/// A stand-in for an endgame the 50-move rule changes: DTZ50 is DTZ with wins and losses of
/// 41 plies or more drawn and every third one of 20 to 40 plies made two plies deeper. Both
/// files are written for both sides to move (as older files are), DTZ's other side by one ply.
fn rule50_bites(dir: &Path, m: &Material) {
    let changed = |v: TbValue| match v.outcome() {
        Outcome::Win(n) | Outcome::Loss(n) if n > 40 => TbValue::DRAW,
        Outcome::Win(n) if n >= 20 && n % 3 == 0 => TbValue::win(n + 2).unwrap(),
        Outcome::Loss(n) if n >= 20 && n % 3 == 0 => TbValue::loss(n + 2).unwrap(),
        _ => v,
    };
    let dtz = read_metric(dir, m, Metric::Dtz);
    let dtz50: Vec<(Half, Vec<TbValue>)> = dtz
        .iter()
        .map(|(h, v)| (*h, v.iter().map(|&x| changed(x)).collect()))
        .collect();
    write_metric(dir, m, Metric::Dtz, &dtz);
    write_metric(dir, m, Metric::Dtz50, &dtz50);
}

#[test]
fn scan_counts_positions_as_brute_force_does() {
    let start = Instant::now();
    let dir = tempfile::tempdir().expect("temporary directory");
    let kqkr = Material::parse("KQKR").unwrap();
    let krkr = Material::parse("KRKR").unwrap();
    let opts = GenOptions {
        verify: false,
        ..GenOptions::new(dir.path())
    };
    gentb(&[kqkr, krkr], &opts, &mut |_| {}).expect("generation");
    // As built: DTZ and DTZ50 stored for one side to move, the other worked out by one ply.
    let t = EndgameTables::open(dir.path(), &kqkr).expect("tables open");
    assert!(t.zeroing_missing().is_some(), "KQKR is stored for one side");
    drop(t);
    let s = check(dir.path(), &kqkr);
    assert_eq!(s.get(Half::Wtm, Color::White).drawn_by_rule50, 0);

    rule50_bites(dir.path(), &kqkr);
    let s = check(dir.path(), &kqkr);
    let white_wtm = s.get(Half::Wtm, Color::White);
    assert!(white_wtm.drawn_by_rule50 > 0 && white_wtm.delayed_by_rule50 > 0);
    assert!(white_wtm.max_dtz50.unwrap().plies <= 42);
    assert!(s.get(Half::Btm, Color::Black).wins > 0, "Black wins some");

    // Symmetric: only Btm is stored; 1-0 wtm is 0-1 btm with colours flipped. The rule
    // changes nothing here.
    let s = check(dir.path(), &krkr);
    for winner in Color::BOTH {
        assert_eq!(s.get(Half::Wtm, winner), s.get(Half::Btm, !winner));
        for h in Half::BOTH {
            let w = s.get(h, winner);
            assert_eq!((w.drawn_by_rule50, w.delayed_by_rule50), (0, 0));
            assert_eq!(w.max_dtz, w.max_dtz50);
        }
    }
    eprintln!("{:.1} s", start.elapsed().as_secs_f64());
}
