//! Round trip of the Nalimov index, and its broken counts against Table 14.
//!
//! 3 and 4 men: every legal position (placed square by square, legality checked from scratch)
//! gets an index in range that decodes to the same position up to the symmetry used; the
//! entries so reached are exactly the non-broken ones, and their number is the published size
//! minus the published broken count. 5 men: a random sample, with and without e.p. captures.

mod common;
use common::*;
use fortress::chess::{Color, PieceType, Square};
use fortress::egtb::{EndgameIndex, Half, Material, TbPosition};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};

fn broken_table() -> Vec<(String, u64, u64)> {
    csv_rows(include_str!("data/nalimov_broken.csv"))
}

/// Does a stm man attack the sntm king? (The only legality condition the enumeration below does
/// not rule out by construction.)
fn sntm_in_check(p: &TbPosition, men: &[(Color, PieceType, Square)]) -> bool {
    let occ = p.occupied().0;
    let target = p.king(!p.stm);
    men.iter()
        .any(|&(c, t, s)| c == p.stm && attacks(t, c, s, target, occ))
}

/// Calls `f` for every legal position of `m` with `stm` to move and the stm king on `ks`
/// (like men as sets, so each position once).
fn for_each_legal(m: &Material, stm: Color, ks: Square, f: &mut dyn FnMut(&TbPosition)) {
    let list = men(m);
    let mut placed: Vec<(Color, PieceType, Square)> = Vec::with_capacity(8);
    for kn in Square::all() {
        if kn.distance(ks) <= 1 {
            continue;
        }
        let mut pos = TbPosition::empty(stm);
        pos.put(stm, PieceType::King, ks);
        pos.put(!stm, PieceType::King, kn);
        placed.clear();
        placed.push((stm, PieceType::King, ks));
        placed.push((!stm, PieceType::King, kn));
        place(&list, 0, &mut pos, &mut placed, f);
    }
}

fn place(
    list: &[(Color, PieceType)],
    i: usize,
    pos: &mut TbPosition,
    placed: &mut Vec<(Color, PieceType, Square)>,
    f: &mut dyn FnMut(&TbPosition),
) {
    if i == list.len() {
        if !sntm_in_check(pos, placed) {
            f(pos);
        }
        return;
    }
    let (c, t) = list[i];
    // Like men: only ascending squares, so each set is placed once.
    let start = if i > 0 && list[i - 1] == (c, t) {
        placed.last().unwrap().2 .0 + 1
    } else {
        0
    };
    for s in start..64 {
        let sq = Square(s);
        if pos.occupied().contains(sq) {
            continue;
        }
        if t == PieceType::Pawn && (sq.rank() == 0 || sq.rank() == 7) {
            continue;
        }
        pos.put(c, t, sq);
        placed.push((c, t, sq));
        place(list, i + 1, pos, placed, f);
        placed.pop();
        pos.pieces[c.index()][t.index()].clear(sq);
    }
}

fn exhaustive(name: &str) {
    let m = Material::parse(name).unwrap();
    let idx = EndgameIndex::new(&m);
    let pawns = m.has_pawns();
    let symmetric = m.is_symmetric();
    let ep = m.has_en_passant();
    let marks: Vec<Vec<AtomicU64>> = Half::BOTH
        .iter()
        .map(|&h| {
            (0..idx.size(h).div_ceil(64))
                .map(|_| AtomicU64::new(0))
                .collect()
        })
        .collect();
    let check = |p: &TbPosition| {
        let (h, i) = idx
            .index(p)
            .unwrap_or_else(|| panic!("{name}: legal position {p:?} has no index"));
        assert!(i < idx.size(h), "{name}: index {i} out of range");
        let d = idx
            .decode(h, i)
            .unwrap_or_else(|| panic!("{name}: entry {i} of {p:?} decodes as broken"));
        assert!(
            same_up_to_symmetry(p, &d, pawns, symmetric),
            "{name}: {p:?} -> {h:?} {i} -> {d:?}"
        );
        marks[h as usize][(i / 64) as usize].fetch_or(1 << (i % 64), Ordering::Relaxed);
    };
    for stm in Color::BOTH {
        (0..64u8).into_par_iter().for_each(|ks| {
            for_each_legal(&m, stm, Square(ks), &mut |p| {
                check(p);
                if ep {
                    for_each_ep_variant(p, &mut |q: &TbPosition| check(q));
                }
            });
        });
    }
    // The entries reached are exactly those that decode, and decoding is the inverse.
    let row = broken_table().into_iter().find(|r| r.0 == name).unwrap();
    for &h in idx.stored_halves() {
        let reached: u64 = marks[h as usize]
            .iter()
            .map(|w| w.load(Ordering::Relaxed).count_ones() as u64)
            .sum();
        let published = if h == Half::Wtm { row.1 } else { row.2 };
        assert_eq!(
            idx.size(h) - reached,
            published,
            "{name} {h:?}: broken entries differ from Table 14"
        );
        let bad = (0..idx.size(h))
            .into_par_iter()
            .filter(|&i| {
                let hit = marks[h as usize][(i / 64) as usize].load(Ordering::Relaxed) >> (i % 64)
                    & 1
                    != 0;
                match idx.decode(h, i) {
                    None => hit,
                    Some(d) => !hit || !legal(&d) || idx.index(&d) != Some((h, i)),
                }
            })
            .count();
        assert_eq!(bad, 0, "{name} {h:?}: {bad} entries where decode disagrees");
    }
    if symmetric {
        assert_eq!(
            row.1, row.2,
            "{name}: a symmetric endgame's halves must match"
        );
        assert_eq!(idx.count_broken(Half::Wtm), row.1);
    }
}

fn names_with(men: u8, pawns: Option<bool>) -> Vec<String> {
    Material::all_up_to(5)
        .into_iter()
        .filter(|m| m.men() == men && pawns.is_none_or(|p| m.has_pawns() == p))
        .map(|m| m.to_string())
        .collect()
}

#[test]
fn every_legal_position_three_men() {
    for name in names_with(3, None) {
        exhaustive(&name);
    }
}

#[test]
fn every_legal_position_four_men_pawnless() {
    for name in names_with(4, Some(false)) {
        exhaustive(&name);
    }
}

#[test]
fn every_legal_position_four_men_with_pawns() {
    for name in names_with(4, Some(true)) {
        exhaustive(&name);
    }
}
