//! Perft against the published counts (chessprogramming.org "Perft Results"): this proves the
//! move generator, make/unmake and the incremental keys on castling, en passant and promotions.

use fortress::chess::perft::perft;
use fortress::chess::{legal_moves, Position};

const POSITIONS: [(&str, &str, &[u64]); 6] = [
    (
        "start",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        &[20, 400, 8_902, 197_281, 4_865_609, 119_060_324],
    ),
    (
        "kiwipete",
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        &[48, 2_039, 97_862, 4_085_603, 193_690_690],
    ),
    (
        "position 3",
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
        &[14, 191, 2_812, 43_238, 674_624, 11_030_083, 178_633_661],
    ),
    (
        "position 4",
        "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
        &[6, 264, 9_467, 422_333, 15_833_292, 706_045_033],
    ),
    (
        "position 5",
        "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
        &[44, 1_486, 62_379, 2_103_487, 89_941_194],
    ),
    (
        "position 6",
        "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
        &[46, 2_079, 89_890, 3_894_594, 164_075_551],
    ),
];

#[test]
fn perft_matches_published_counts() {
    for (name, fen, counts) in POSITIONS {
        let mut pos = Position::from_fen(fen).unwrap();
        for (i, &expected) in counts.iter().enumerate() {
            let depth = i as u32 + 1;
            assert_eq!(perft(&mut pos, depth), expected, "{} depth {}", name, depth);
        }
        assert_eq!(pos.to_fen(), Position::from_fen(fen).unwrap().to_fen());
    }
}

/// Walks the tree checking that the incremental Zobrist key always equals the key computed from
/// scratch, and that unmake restores the position exactly.
fn walk(pos: &mut Position, depth: u32) {
    assert_eq!(pos.key(), pos.compute_key(), "{}", pos.to_fen());
    if depth == 0 {
        return;
    }
    let before = pos.to_fen();
    for m in legal_moves(pos).iter() {
        pos.make_move(m);
        walk(pos, depth - 1);
        pos.unmake_move();
        assert_eq!(pos.to_fen(), before);
    }
}

#[test]
fn incremental_keys_match_recomputed_keys() {
    for (_, fen, _) in POSITIONS {
        walk(&mut Position::from_fen(fen).unwrap(), 3);
    }
}

#[test]
fn colour_flip_preserves_perft() {
    for (name, fen, counts) in POSITIONS {
        let mut flipped = Position::from_fen(fen).unwrap().color_flipped();
        assert_eq!(perft(&mut flipped, 3), counts[2], "{} flipped", name);
    }
}
