use super::*;
use crate::egtb::Material;

/// A knight attacks at most `KNIGHT_KING_SQUARES` of the squares around a king, wherever
/// the two stand.
#[test]
fn a_knight_attacks_at_most_two_squares_around_a_king() {
    let most = (0..64u8)
        .flat_map(|k| (0..64u8).map(move |n| (k, n)))
        .map(|(k, n)| {
            (piece_attacks(PieceType::Knight, Square(n), Bitboard(0)).0 & king_attacks(Square(k)).0)
                .count_ones()
        })
        .max();
    assert_eq!(most, Some(KNIGHT_KING_SQUARES));
}

/// The division by multiplication agrees with the division instruction for every radix a
/// digit can have (kings, and one to four like men or pawns), at the edges and at random
/// numerators up to 2^40, beyond the largest six-man entry (about 2^34).
#[test]
fn radix_division_is_exact() {
    let choose = |n: u64, k: u64| (0..k).fold(1, |c, i| c * (n - i) / (i + 1));
    let mut radices = vec![10, 32, 64];
    for k in 1..=4 {
        radices.extend([choose(64, k), choose(48, k)]);
    }
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for value in radices {
        let radix = Radix::new(value);
        let edges = [0, 1, value - 1, value, value + 1, (1 << 40) - 1];
        let random = (0..100_000).map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed >> 24
        });
        for x in edges.into_iter().chain(random) {
            assert_eq!(
                radix.div_rem(x),
                (x / value, (x % value) as u32),
                "{x} / {value}"
            );
        }
    }
}

/// Every entry that decodes encodes back to itself, and every legal position of the Nalimov
/// index has an entry that decodes to one of its symmetric images.
fn round_trip(name: &str) {
    let m = Material::parse(name).unwrap();
    let index = EndgameIndex::new(&m);
    let layout = Layout::new(&index);
    let mut entries = 0u64;
    for h in Half::BOTH {
        for idx in 0..layout.size(h) {
            if let Some(pos) = layout.decode(h, idx) {
                assert!(pos.is_legal(), "{name} {idx}");
                assert_eq!(layout.encode(&pos), Some((h, idx)), "{name} {idx}");
                entries += 1;
            }
        }
    }
    let mut positions = 0u64;
    for &h in index.stored_halves() {
        for i in 0..index.size(h) {
            let Some(pos) = index.decode(h, i) else {
                continue;
            };
            let (gh, gi) = layout.encode(&pos).unwrap();
            let back = layout
                .decode(gh, gi)
                .expect("entry of a legal position decodes");
            assert_eq!(back.material(), pos.material());
            assert_eq!(back.stm, pos.stm);
            positions += 1;
        }
    }
    // Nalimov keeps one half of a symmetric endgame and twin entries on the diagonal; the
    // layout keeps both halves and one entry per position, so only bounds can be compared.
    assert!(entries > 0 && positions > 0);
}

#[test]
fn layout_round_trips() {
    for name in ["KQK", "KPK", "KBBK", "KPKP", "KQKQ", "KPPK", "KNNK"] {
        round_trip(name);
    }
}

/// A scan gives, entry by entry, what `decode` gives, from any starting entry (chunks of
/// 1000 here, so that the counting carries through every digit and into the e.p. part).
#[test]
fn scan_equals_decode() {
    for name in ["KQK", "KBBK", "KPKP", "KRPK"] {
        let m = Material::parse(name).unwrap();
        let index = EndgameIndex::new(&m);
        let layout = Layout::new(&index);
        for h in Half::BOTH {
            let size = layout.size(h);
            let mut seen = 0;
            for start in (0..size).step_by(1000) {
                let mut next = start;
                layout.scan(h, start..(start + 1000).min(size), |idx, pos| {
                    assert_eq!(idx, next);
                    assert_eq!(pos.copied(), layout.decode(h, idx), "{name} {idx}");
                    next += 1;
                    seen += 1;
                });
            }
            assert_eq!(seen, size, "{name}");
        }
    }
}

/// `scan_mates` gives every valid entry whose side to move is checkmated, with `scan`'s
/// position, and only valid entries; it skips most of the others.
#[test]
fn scan_mates_finds_every_mate() {
    use crate::egtb::generate::moves::{for_each_move, in_check};
    let mated = |pos: &TbPosition| in_check(pos) && for_each_move(pos, |_, _| false);
    for name in ["KQK", "KRKN", "KBBK", "KPKP", "KNKP", "KRBKN", "KQKNN"] {
        let m = Material::parse(name).unwrap();
        let index = EndgameIndex::new(&m);
        let layout = Layout::new(&index);
        let mut mates = 0u64;
        for h in Half::BOTH {
            let size = layout.size(h);
            let step = if size > 20_000_000 { 97 } else { 1 };
            let (mut given, mut valid) = (0u64, 0u64);
            for start in (0..size).step_by(1000 * step) {
                let range = start..(start + 1000).min(size);
                let mut expected = Vec::new();
                layout.scan(h, range.clone(), |idx, pos| {
                    if let Some(pos) = pos {
                        valid += 1;
                        if mated(pos) {
                            expected.push(idx);
                        }
                    }
                });
                let mut found = Vec::new();
                layout.scan_mates(h, range, |idx, pos| {
                    assert_eq!(Some(*pos), layout.decode(h, idx), "{name} {idx}");
                    given += 1;
                    if mated(pos) {
                        found.push(idx);
                    }
                });
                mates += expected.len() as u64;
                assert_eq!(found, expected, "{name} {h:?}");
            }
            assert!(given * 2 < valid, "{name} {h:?}: {given} of {valid}");
        }
        assert!(mates > 0, "{name}");
    }
}

/// `nalimov_kings` names the king block of Nalimov's index that an entry's values go to,
/// in both halves (the one with Black to move numbers Black's king first).
#[test]
fn nalimov_kings_names_the_block_written() {
    for name in ["KQKR", "KBBK", "KRKN"] {
        let m = Material::parse(name).unwrap();
        let index = EndgameIndex::new(&m);
        let layout = Layout::new(&index);
        let mut checked = 0u64;
        let mut frames = FrameCache::default();
        for &h in index.stored_halves() {
            let blocks = index.king_blocks(h);
            for idx in (0..layout.size(h)).step_by(7) {
                let Some(pos) = layout.decode(h, idx) else {
                    continue;
                };
                layout.nalimov_entries(h, idx, &pos, &mut frames, |ni| {
                    let (ks, kn, _) = blocks
                        .iter()
                        .find(|b| b.2.contains(&ni))
                        .expect("a main-zone entry lies in a king block");
                    assert_eq!(layout.nalimov_kings(h, idx), (ks.0, kn.0), "{name} {idx}");
                    checked += 1;
                });
            }
        }
        assert!(checked > 1000, "{name}: {checked}");
    }
}

/// `run_words_nalimov_order` takes each word of a king run once, the man least significant
/// in Nalimov's index turned first: KQRKBN's White rook where Black is to move, Black's
/// bishop where White is (the knight is the lone last man). Without a lone last man the
/// layout's order stays.
#[test]
fn run_words_come_in_nalimov_order() {
    let m = Material::parse("KQRKBN").unwrap();
    let index = EndgameIndex::new(&m);
    let layout = Layout::new(&index);
    for (h, rook_or_bishop) in [(Half::Btm, 64), (Half::Wtm, 1)] {
        let (_, run) = layout.king_runs(h).nth(100).expect("a run");
        let first = run.start / 64;
        let mut seen = vec![false; ((run.end - run.start) / 64) as usize];
        let mut taken = Vec::new();
        assert!(layout.run_words_nalimov_order(h, &run, |w| {
            let k = (w - first) as usize;
            assert!(!seen[k], "word {w} twice");
            seen[k] = true;
            taken.push(w);
        }));
        assert!(seen.iter().all(|&s| s), "{h:?}: every word");
        assert_eq!(taken[1] - taken[0], rook_or_bishop, "{h:?}");
    }
    let kbbknn = EndgameIndex::new(&Material::parse("KBBKNN").unwrap());
    let layout = Layout::new(&kbbknn);
    let (_, run) = layout.king_runs(Half::Btm).next().expect("a run");
    assert!(!layout.run_words_nalimov_order(Half::Btm, &run, |_| panic!("no word")));
}

/// The solver's shortcut for predecessors gives the entry `encode` gives, for every
/// un-move of every entry (pawn moves, e.p. and like men included).
#[test]
fn forward_entries_agree_with_encode() {
    use super::super::moves::{for_each_quiet, for_each_quiet_set, Legality};
    for name in ["KQKR", "KBBK", "KBNK"] {
        let m = Material::parse(name).unwrap();
        let index = EndgameIndex::new(&m);
        let layout = Layout::new(&index);
        let mut checked = 0u64;
        for h in Half::BOTH {
            for idx in (0..layout.size(h)).step_by(5) {
                let Some(pos) = layout.decode(h, idx) else {
                    continue;
                };
                let mut made = Vec::new();
                for_each_quiet(&pos, |succ, kind| {
                    let e = layout.encode(succ);
                    assert_eq!(layout.encode_move(idx, &pos, succ, kind), e, "{name} {idx}");
                    made.push(e.unwrap().1);
                    true
                });
                if layout.unmoves_by_squares(idx, &pos) {
                    let mut by_squares = Vec::new();
                    for_each_quiet_set(&pos, &Legality::of(&pos), |kind, from, tos| {
                        layout.succ_entries(idx, &pos, kind, from, tos, |i| by_squares.push(i));
                        true
                    });
                    made.sort_unstable();
                    by_squares.sort_unstable();
                    assert_eq!(made, by_squares, "{name} {h:?} {idx}");
                }
                checked += made.len() as u64;
            }
        }
        assert!(checked > 200_000, "{name}: {checked}");
    }
}

#[test]
fn encode_unmove_agrees_with_encode() {
    use super::super::moves::for_each_unmove;
    for name in ["KQKR", "KBBK", "KPPK", "KPKP"] {
        let m = Material::parse(name).unwrap();
        let index = EndgameIndex::new(&m);
        let layout = Layout::new(&index);
        let mut checked = 0u64;
        for h in Half::BOTH {
            for idx in 0..layout.size(h) {
                let Some(pos) = layout.decode(h, idx) else {
                    continue;
                };
                for_each_unmove(&pos, true, |pred, kind| {
                    assert_eq!(
                        layout.encode_unmove(idx, &pos, pred, kind),
                        layout.encode(pred),
                        "{name} {idx}"
                    );
                    checked += 1;
                });
            }
        }
        assert!(checked > 1_000_000, "{name}: {checked}");
    }
}

/// Un-captures from a sub-endgame's positions, numbered one after another through
/// `encode_near` as the seeds number them, get the entries `encode` gives them: with the
/// kings on the diagonal too, and with like men (KBBKN's bishops) and like sides.
#[test]
fn encode_near_agrees_with_encode() {
    use super::super::moves::for_each_uncapture;
    for (name, sub, captured) in [
        ("KQRKB", "KQRK", PieceType::Bishop),
        ("KBBKN", "KBBK", PieceType::Knight),
        ("KRKR", "KRK", PieceType::Rook),
    ] {
        let m = Material::parse(name).unwrap();
        let index = EndgameIndex::new(&m);
        let layout = Layout::new(&index);
        let sub_index = EndgameIndex::new(&Material::parse(sub).unwrap());
        let sub_layout = Layout::new(&sub_index);
        let (mut checked, mut diagonal) = (0u64, 0u64);
        let mut near = None;
        for idx in (0..sub_layout.size(Half::Wtm)).step_by(7) {
            let Some(pos) = sub_layout.decode(Half::Wtm, idx) else {
                continue;
            };
            // White captured: Black to move in the sub-endgame, White's man un-moved.
            let pos = TbPosition {
                stm: Color::Black,
                ..pos
            };
            for_each_uncapture(&pos, captured, None, |pred| {
                assert_eq!(
                    Some(layout.encode_near(&mut near, pred)),
                    layout.encode(pred),
                    "{name} {pred:?}"
                );
                checked += 1;
                diagonal += near.is_none() as u64;
            });
        }
        assert!(
            checked > 50_000 && diagonal > 100,
            "{name}: {checked}, {diagonal}"
        );
    }
}

/// An entry's kings alone say what its position says of its neighbours' symmetry: every
/// king placement of both halves of pawnless endgames with single men, pairs and a lone
/// last man, a few entries each, and more than a thousand entries near a diagonal.
#[test]
fn kings_alone_tell_symmetric_neighbours() {
    for name in ["KQRKBN", "KBBKNN", "KQKR", "KBBK", "KRK"] {
        let m = Material::parse(name).unwrap();
        let index = EndgameIndex::new(&m);
        let layout = Layout::new(&index);
        let (mut checked, mut near_diagonal) = (0u64, 0u64);
        for h in Half::BOTH {
            for (_, run) in layout.king_runs(h) {
                // Entries spread over the run, their men on squares of their own.
                let len = run.end - run.start;
                let spread = (1..=20u64).map(|k| run.start + k * 0x9e37_79b9 % len);
                for idx in spread {
                    let Some(pos) = layout.decode(h, idx) else {
                        continue;
                    };
                    let by_kings = layout.entry_has_no_symmetric_neighbours(h, idx);
                    assert_eq!(
                        by_kings,
                        layout.no_symmetric_neighbours(&pos),
                        "{name} {h:?} {idx}"
                    );
                    checked += 1;
                    near_diagonal += !by_kings as u64;
                }
            }
        }
        assert!(
            checked > 5_000 && near_diagonal > 1_000,
            "{name}: {checked}, {near_diagonal}"
        );
    }
}

/// The pawn level the layout reads off an entry's digits is the one of its position; a
/// pawn push lowers it and every other move that stays in the endgame keeps it (what the
/// DTZ50 solve by pawn level relies on).
#[test]
fn pawn_level_falls_with_pushes_only() {
    use super::super::moves::{for_each_move, MoveClass};
    for name in ["KPK", "KPKP", "KPPK"] {
        let m = Material::parse(name).unwrap();
        let index = EndgameIndex::new(&m);
        let layout = Layout::new(&index);
        let (mut pushes, mut others) = (0u64, 0u64);
        for h in Half::BOTH {
            for idx in 0..layout.size(h) {
                let Some(pos) = layout.decode(h, idx) else {
                    continue;
                };
                let l = layout.pawn_level(h, idx);
                assert_eq!(l, pawn_level_of(&pos), "{name} {idx}");
                assert!(l >= 1 && l <= layout.max_pawn_level(), "{name} {idx}");
                for_each_move(&pos, |succ, class| {
                    match class {
                        MoveClass::Pawn => {
                            let (sh, si) = layout.encode(succ).expect("an entry");
                            assert!(layout.pawn_level(sh, si) < l, "{name} {idx}");
                            pushes += 1;
                        }
                        MoveClass::Quiet => {
                            let (sh, si) = layout.encode(succ).expect("an entry");
                            assert_eq!(layout.pawn_level(sh, si), l, "{name} {idx}");
                            others += 1;
                        }
                        MoveClass::Convert { .. } => {}
                    }
                    true
                });
            }
        }
        assert!(
            pushes > 10_000 && others > 100_000,
            "{name}: {pushes} {others}"
        );
    }
}

#[test]
fn stabiliser_of_diagonal_positions() {
    let m = Material::parse("KQK").unwrap();
    let index = EndgameIndex::new(&m);
    let layout = Layout::new(&index);
    let mut pos = TbPosition::empty(Color::White);
    pos.put(Color::White, PieceType::King, crate::chess::Square(0)); // a1
    pos.put(Color::Black, PieceType::King, crate::chess::Square(63)); // h8
    pos.put(Color::White, PieceType::Queen, crate::chess::Square(27)); // d4
    assert_eq!(layout.stabiliser(&pos), 2);
    pos.pieces[0][PieceType::Queen.index()] = Bitboard(1 << 28); // e4
    assert_eq!(layout.stabiliser(&pos), 1);
    // Two like men that swap places under the reflection: b3 and c2.
    pos.pieces[0][PieceType::Queen.index()] = Bitboard((1 << 17) | (1 << 10));
    assert_eq!(layout.stabiliser(&pos), 2);
}
