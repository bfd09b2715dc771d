//! The recognizers on whole positions: the figures of Tabibi, Felner and Netanyahu (2003),
//! "Blockage Detection in King and Pawn Endings", rebuilt from their captions and text (the
//! diagrams were lost), Fine #70, and textbook KPK positions for the bitbase.

use fastrand::Rng;
use fortress::chess::{Color, Position, Square};
use fortress::recognize::blockage::{cannot_win, structure};
use fortress::recognize::{kpk, recognize, BlockageTable, Bound, Men, Outcome, PawnEnding, Wanted};

/// A position from a FEN whose castling and en-passant fields may be left out.
fn men(fen: &str) -> Men {
    let fields = fen.split_whitespace().count();
    let fen = if fields == 2 {
        format!("{fen} - -")
    } else {
        fen.to_string()
    };
    Men::from(&Position::from_fen(&fen).unwrap_or_else(|e| panic!("{fen}: {e}")))
}

fn squares(names: &str) -> fortress::chess::Bitboard {
    let mut b = fortress::chess::Bitboard::EMPTY;
    for n in names.split_whitespace() {
        b.set(Square::parse(n).unwrap());
    }
    b
}

/// The detector's answer for White, checked for consistency: the hashed probe agrees, and the
/// colour-mirrored position gives the same answer for Black.
fn white_cannot_win(fen: &str) -> bool {
    let m = men(fen);
    let answer = cannot_win(&m, Color::White);
    let mut table = BlockageTable::new(8);
    assert_eq!(table.cannot_win(&m, Color::White), answer, "hash: {fen}");
    assert_eq!(
        table.cannot_win(&m, Color::White),
        answer,
        "hash hit: {fen}"
    );
    assert_eq!(
        cannot_win(&m.mirrored(), Color::Black),
        answer,
        "mirror: {fen}"
    );
    answer
}

// Figure 2: "Despite the material advantage for White, the position is a blockage" (the engines
// of Table 2 gave White +2.4 to +5.5). Rebuilt: White two pawns up, fixed pawns a4 c4 c3 e4 e3 g4
// against a5 c5 e5 g5, and two dynamic pawns b3 and d2 that reach the fence on b4 and d4 where
// Black's b6 and d6 stand two squares ahead (3.2), so any exchange is answered by a recapture.
#[test]
fn figure_2_material_advantage_but_blocked() {
    assert!(white_cannot_win(
        "8/5k2/1p1p4/p1p1p1p1/P1P1P1P1/1PP1P3/3P1K2/8 w"
    ));
    assert!(white_cannot_win(
        "8/5k2/1p1p4/p1p1p1p1/P1P1P1P1/1PP1P3/3P1K2/8 b"
    ));
    // Without b6 the b-pawn breaks through (b3-b4 and bxa5 or bxc5): no blockage.
    assert!(!white_cannot_win(
        "8/5k2/3p4/p1p1p1p1/P1P1P1P1/1PP1P3/3P1K2/8 w"
    ));
}

// Figure 4: "A simple blockage": no mobile pawn for either side, White a pawn up, neither king can
// reach an enemy pawn. Rebuilt: a4 c4 e4 g4 against a5 c5 e5 g5, plus White's c3 fixed behind c4.
#[test]
fn figure_4_simple_blockage_for_both_sides() {
    let fen = "8/4k3/8/p1p1p1p1/P1P1P1P1/2P5/4K3/8 w";
    assert!(white_cannot_win(fen));
    assert!(cannot_win(&men(fen), Color::Black));
    assert_eq!(
        structure(&men(fen), Color::White).fence,
        squares("a4 b4 c4 d4 e4 f4 g4 h4")
    );
}

// Figure 6: "White's fixed pawns on a4, c4, e4 and e5"; g2 cannot move but is dynamic. Rebuilt:
// g2 is stopped by its own king on g3 (a king, not a pawn, so g2 is not fixed). The rest was
// chosen so the fence (a4-b4-c4-d4-d5-e5-f5-g5-h5) holds: Black's g5 guarded by h6 sits on it and
// the g-pawn, walking up, is stopped by g5 before meeting any attacked square.
#[test]
fn figure_6_fixed_pawns_and_a_dynamic_g_pawn() {
    let fen = "8/4k3/4p1pp/p1p1P1p1/P1P1P3/6K1/6P1/8 w";
    let s = structure(&men(fen), Color::White);
    assert_eq!(s.fixed, squares("a4 c4 e4 e5"));
    assert_eq!(s.fence, squares("a4 b4 c4 d4 d5 e5 f5 g5 h5"));
    assert!(white_cannot_win(fen));
}

// Figure 7: the marked squares are a4 c3 c4 e3 h3 (White's fixed pawns) and b4 d4 d3 f3 g3 g6
// (attacked by Black's pawns). Rebuilt: the blockers a5 c5 e4 h4 give exactly b4 d4 d3 f3 g3, and
// g6 alone comes from h7. Kings placed on their sides of the fence a4-b4-c4-d4-d3-e3-f3-g3-h3.
#[test]
fn figure_7_marked_squares() {
    let fen = "8/7p/3k4/p1p5/P1P1p2p/2P1P2P/5K2/8 w";
    let s = structure(&men(fen), Color::White);
    assert_eq!(s.fixed, squares("a4 c3 c4 e3 h3"));
    assert_eq!(s.marked, squares("a4 c3 c4 e3 h3 b4 d4 d3 f3 g3 g6"));
    assert_eq!(s.fence, squares("a4 b4 c4 d4 d3 e3 f3 g3 h3"));
    assert!(white_cannot_win(fen));
}

// Figures 9-15 share the fence a4-b4-...-h4: White a4 c4 e4 g4 fixed by a5 c5 e5 g5.

// Figure 9: a White pawn on f5, above the fence, and Black's king not in front of it: no blockage.
#[test]
fn figure_9_passed_pawn_above_the_fence() {
    assert!(!white_cannot_win("8/1k6/8/p1p1pPp1/P1P1P1P1/8/3K4/8 w"));
}

// Figure 10: the same with Black's king in front of the f5-pawn (f7): blockage.
#[test]
fn figure_10_king_in_front_of_the_pawn() {
    assert!(white_cannot_win("8/5k2/8/p1p1pPp1/P1P1P1P1/8/3K4/8 w"));
    assert!(white_cannot_win("8/5k2/8/p1p1pPp1/P1P1P1P1/8/3K4/8 b"));
    // Beside the pawn is not in front of it.
    assert!(!white_cannot_win("8/8/4k3/p1p1pPp1/P1P1P1P1/8/3K4/8 b"));
    // A Black pawn on g7 covers f6: the f-pawn could take it on its way (f6xg7), so no claim.
    assert!(!white_cannot_win("8/5kp1/8/p1p1pPp1/P1P1P1P1/8/3K4/8 b"));
}

// Figure 11: pawns on b5 and f5 above the fence; the king cannot be on both files: no blockage.
#[test]
fn figure_11_two_pawns_above_the_fence() {
    assert!(!white_cannot_win("8/5k2/8/pPp1pPp1/P1P1P1P1/8/3K4/8 w"));
    assert!(!white_cannot_win("8/1k6/8/pPp1pPp1/P1P1P1P1/8/3K4/8 w"));
}

// Figure 12: White's f4 on the fence, attacked by e5 and g5, Black's f6 two squares ahead:
// fxe5/fxg5 is met by a recapture from f6, f5 locks it: blockage.
#[test]
fn figure_12_dynamic_pawn_on_the_fence() {
    let fen = "8/3k4/5p2/p1p1p1p1/P1P1PPP1/8/3K4/8 w";
    assert_eq!(
        structure(&men(fen), Color::White).fence,
        squares("a4 b4 c4 d4 e4 f4 g4 h4")
    );
    assert!(white_cannot_win(fen));
    // Without f6 the f-pawn breaks through.
    assert!(!white_cannot_win("8/3k4/8/p1p1p1p1/P1P1PPP1/8/3K4/8 w"));
}

// Figure 13: h4 on the fence with Black's h6 ahead, but a second White h-pawn (h3): 1.hxg5 hxg5
// 2.h4 breaks the blockage. Also the other requirement: the square in front (h5) attacked by g6.
#[test]
fn figure_13_fence_pawn_not_alone_on_its_file() {
    assert!(!white_cannot_win("8/3k4/7p/p1p1p1p1/P1P1P1PP/7P/3K4/8 w"));
    assert!(!white_cannot_win("8/3k4/6pp/p1p1p1p1/P1P1P1PP/8/3K4/8 w"));
    // h4 alone, h5 safe: holds.
    assert!(white_cannot_win("8/3k4/7p/p1p1p1p1/P1P1P1PP/8/3K4/8 w"));
}

// Figure 14: dynamic pawns b2, e2, g2 below the fence a4-...-h4. Rebuilt: Black's c4 on the fence
// (guarded by b5), a5 covers b4, e5 fixes e4, h5 fixes h4 and covers g4, g6 two squares ahead of
// g4. The paper: e2 is stopped by e4 (harmless), g2 reaches g4 (3.2 holds), and b2 "engages the
// black c4-pawn after reaching b3", a square below the fence: so the position is NOT a blockage.
// Without the b2 pawn it is.
#[test]
fn figure_14_dynamic_pawns_below_the_fence() {
    let fen = "8/3k4/6p1/pp2p2p/2p1P2P/8/1P1KP1P1/8 w";
    assert_eq!(
        structure(&men(fen), Color::White).fence,
        squares("a4 b4 c4 d4 e4 f4 g4 h4")
    );
    assert!(!white_cannot_win(fen));
    assert!(white_cannot_win("8/3k4/6p1/pp2p2p/2p1P2P/8/3KP1P1/8 w"));
}

// Figure 15: e4 and g4 fixed on the fence, f2 can reach f4 (attacked by e5, g5) with no Black f6;
// still no win when Black's king is on the f-file (3.4): it takes on f4 and keeps a protected
// passed pawn, and stops White's new passed pawn.
#[test]
fn figure_15_the_exception() {
    assert!(white_cannot_win("8/5k2/8/p1p1p1p1/P1P1P1P1/8/3K1P2/8 w"));
    assert!(white_cannot_win("8/5k2/8/p1p1p1p1/P1P1P1P1/8/3K1P2/8 b"));
    // Black's king off the f-file: f2-f4 breaks through.
    assert!(!white_cannot_win("8/3k4/8/p1p1p1p1/P1P1P1P1/8/3K1P2/8 w"));
    // A second White pawn on a neighbouring file: the exception no longer applies.
    assert!(!white_cannot_win("8/5k2/8/p1p1p1p1/P1P1P1P1/6P1/3K1P2/8 w"));
}

// Figure 16: Black to move; 1...Rxc4 2.dxc4 g6 gives a blockage with the fence
// a4-b4-c4-d4-d5-e5-f5-g5-h5, White's dynamic pawns b2, e2, h4 unable to break it. Rebuilt after
// 2...g6 (White to move): White a4 b2 c4 (from d3) e2 e5 g5 h4, Black a5 b4 c5 e6 g6 h7; b2 is
// stopped by b4 (guarded by a5 and c5), e2 by e5, and h4 reaches h5 with h7 two squares ahead.
#[test]
fn figure_16_after_rxc4() {
    let fen = "8/5k1p/4p1p1/p1p1P1P1/PpP4P/8/1P2P1K1/8 w";
    assert_eq!(
        structure(&men(fen), Color::White).fence,
        squares("a4 b4 c4 d4 d5 e5 f5 g5 h5")
    );
    assert!(white_cannot_win(fen));
}

// Figures 18 and 19 build on Figure 3 (Deep Fritz - Kramnik, game 1): White's e5 and g5 fixed by
// e6 and g6, fence through e5-f5-g5 (rank 5, below the sixth), White's f-pawn behind it. Rebuilt
// queenside: a4 c4 against a5 c5, the fence rising d4-d5.
// Figure 18 (Black Ka6, White Kg4, f-pawn on f3): the paper says the search sees Black's king reach
// the f-file in time; the detector itself needs the king ON the f-file (3.4), so it says no at the
// diagram and yes once the king has arrived.
#[test]
fn figure_18_king_reaches_the_f_file() {
    assert!(!white_cannot_win("8/8/k3p1p1/p1p1P1P1/P1P3K1/5P2/8/8 w"));
    assert!(white_cannot_win("8/5k2/4p1p1/p1p1P1P1/P1P3K1/5P2/8/8 w"));
    assert!(white_cannot_win("5k2/8/4p1p1/p1p1P1P1/P1P3K1/5P2/8/8 b"));
}

// Figure 19: White's king to g3 and the pawn to f4: 1.f5 wins, Black's king is too far.
#[test]
fn figure_19_f5_wins() {
    assert!(!white_cannot_win("8/8/k3p1p1/p1p1P1P1/P1P2P2/6K1/8/8 w"));
}

// Fine #70 (the paper's Figure 1): 1.Kb1 wins; no fence separates the kings.
#[test]
fn fine_70_is_no_blockage() {
    let fen = "8/k7/3p4/p2P1p2/P2P1P2/8/8/K7 w - - 0 1";
    assert!(!white_cannot_win(fen));
    assert_eq!(structure(&men(fen), Color::White).fence, squares(""));
}

#[test]
fn pawn_that_can_capture_breaks_the_blockage() {
    // Black's d5 can be taken by c4 or e4.
    assert!(!white_cannot_win("8/3k4/8/p1ppp1p1/P1P1P1P1/8/3K4/8 w"));
}

#[test]
fn king_on_the_fence_or_wrong_side_is_no_blockage() {
    // White's king on d4, a fence square (attacked by c5 and e5, so not even legal): no claim.
    assert!(!white_cannot_win("8/3k4/8/p1p1p1p1/P1PKP1P1/8/8/8 w"));
    assert!(!white_cannot_win("8/3K4/8/p1p1p1p1/P1P1P1P1/8/8/3k4 w"));
}

#[test]
fn enemy_pawns_below_the_fence_are_not_counted_on() {
    // Black's b3 stands below the fence: White's king will take it; the fence holds without it.
    let fen = "8/4k3/8/p1p1p1p1/P1P1P1P1/1p6/4K3/8 w";
    assert_eq!(structure(&men(fen), Color::White).removed, squares("b3"));
    assert!(white_cannot_win(fen));
    // Black's b3 also blocks White's b2: once b3 is discounted, b2 is dynamic, walks to b4 on the
    // fence without a Black b6, and only the exception (3.4) can save Black: its king must be on
    // the b-file.
    assert!(!white_cannot_win("8/4k3/8/p1p1p1p1/P1P1P1P1/1p6/1P2K3/8 w"));
    assert!(white_cannot_win("8/1k6/8/p1p1p1p1/P1P1P1P1/1p6/1P2K3/8 w"));
}

#[test]
fn pieces_or_en_passant_mean_no_claim() {
    let mut m = men("8/4k3/8/p1p1p1p1/P1P1P1P1/8/4K3/8 w");
    assert!(cannot_win(&m, Color::White));
    m.en_passant = Some(Square::parse("b6").unwrap());
    assert!(!cannot_win(&m, Color::White));
    assert!(!cannot_win(
        &men("8/4k3/8/p1p1p1p1/P1P1P1P1/8/4K3/7N w"),
        Color::White
    ));
}

// ---------------------------------------------------------------------------------------------
// KPK bitbase.

fn kpk_wins(wk: &str, p: &str, bk: &str, wtm: bool) -> bool {
    let sq = |s| Square::parse(s).unwrap();
    kpk::white_wins(sq(wk), sq(p), sq(bk), wtm).expect("legal position")
}

#[test]
fn kpk_counts() {
    let s = kpk::stats();
    println!("KPK (pawn on files a-d): {s:?}");
    // Legal positions, counted independently of the iteration: 24 pawn squares, then the kings.
    let (mut wtm, mut btm) = (0u32, 0u32);
    for p in 8..56u8 {
        if p % 8 > 3 {
            continue;
        }
        for wk in 0..64u8 {
            for bk in 0..64u8 {
                let legal_btm =
                    wk != bk && wk != p && bk != p && Square(wk).distance(Square(bk)) > 1;
                let checked = fortress::chess::attacks::pawn_attacks(Color::White, Square(p))
                    .contains(Square(bk));
                btm += legal_btm as u32;
                wtm += (legal_btm && !checked) as u32;
            }
        }
    }
    assert_eq!((s.white_to_move_legal, s.black_to_move_legal), (wtm, btm));
    // A rook pawn with Black's king on its queening square is never won.
    for wk in 0..64u8 {
        for p in [8u8, 16, 24, 32, 40] {
            let (wk, p, bk) = (Square(wk), Square(p), Square::A8);
            if let Some(won) = kpk::white_wins(wk, p, bk, true) {
                assert!(!won, "{wk} {p}");
            }
        }
    }
    assert!(s.white_to_move_won > s.black_to_move_won);
}

#[test]
fn kpk_key_squares_and_opposition() {
    // King on a key square (e6 for a pawn on e4): won whoever moves.
    assert!(kpk_wins("e6", "e4", "e8", true));
    assert!(kpk_wins("e6", "e4", "e8", false));
    // Ke5 + Pe4 against Ke7: White to move, Black has the opposition: draw; Black to move: win.
    assert!(!kpk_wins("e5", "e4", "e7", true));
    assert!(kpk_wins("e5", "e4", "e7", false));
    // King on the sixth in front of its pawn on the fifth: won whoever moves (1.Kd6 Kd8 2.e6).
    assert!(kpk_wins("e6", "e5", "e8", true));
    assert!(kpk_wins("e6", "e5", "e8", false));
    // Pawn on the sixth, Black's king in front of it, White's king behind: drawn whoever moves
    // (1...Ke8 2.Kd6 Kd8 3.e7+ Ke8 4.Ke6 stalemate).
    assert!(!kpk_wins("e5", "e6", "e7", true));
    assert!(!kpk_wins("e5", "e6", "e7", false));
    // Pawn on the sixth with the king beside it: 1.e7 and 2.Kd7.
    assert!(kpk_wins("d6", "e6", "e8", true));
    // Pawn on the seventh, king guarding the promotion square.
    assert!(kpk_wins("d7", "e7", "a1", true));
}

#[test]
fn kpk_rook_pawns_and_square_rule() {
    // Black's king in the corner in front of an a-pawn: draw whatever White does.
    assert!(!kpk_wins("b6", "a6", "a8", true));
    assert!(!kpk_wins("c5", "a5", "a8", true));
    // White's king controlling the queening square: the rook pawn wins.
    assert!(kpk_wins("b7", "a5", "d7", true));
    // The square rule: pawn on h5, Black's king on d5 is inside the square with Black to move...
    // d5 to h8 is 4 moves, the pawn needs 3: outside with White to move, inside with Black to move.
    assert!(kpk_wins("a1", "h5", "c5", true));
    assert!(!kpk_wins("a1", "h5", "d5", false));
    // The double step: a pawn on a2 runs like one on a3, whose square reaches the f-file.
    assert!(kpk_wins("h1", "a2", "g5", true));
    assert!(!kpk_wins("h1", "a2", "f5", true));
}

#[test]
fn kpk_through_the_material_recognizer_and_mirrors() {
    let win = Some(Bound::Exact(Outcome::Win));
    let loss = Some(Bound::Exact(Outcome::Loss));
    let draw = Some(Bound::Exact(Outcome::Draw));
    assert_eq!(recognize(&men("4k3/8/4K3/8/4P3/8/8/8 w")), win);
    assert_eq!(recognize(&men("4k3/8/4K3/8/4P3/8/8/8 b")), loss);
    // Colours swapped (Black has the pawn, White's lone king to move): still a loss for it.
    assert_eq!(recognize(&men("4k3/8/4K3/8/4P3/8/8/8 b").mirrored()), loss);
    assert_eq!(recognize(&men("4k3/8/4K3/8/4P3/8/8/8 w").mirrored()), win);
    assert_eq!(recognize(&men("k7/8/P1K5/8/8/8/8/8 w")), draw);
    // Files e-h by symmetry: the same as on d.
    assert_eq!(
        recognize(&men("3k4/8/3K4/3P4/8/8/8/8 w")),
        recognize(&men("4k3/8/4K3/4P3/8/8/8/8 w"))
    );
}

// ---------------------------------------------------------------------------------------------
// Wrong bishop and rook pawns.

#[test]
fn wrong_bishop_rook_pawn_with_king_in_the_corner() {
    let draw = Some(Bound::Exact(Outcome::Draw));
    // a-pawns promote on a8 (light); dark-squared bishop; Black's king on a8, b7, b8 or a7.
    assert_eq!(recognize(&men("k7/8/P7/8/P7/2K5/8/4B3 w")), draw);
    assert_eq!(recognize(&men("1k6/8/P7/8/P7/2K5/8/4B3 b")), draw);
    assert_eq!(recognize(&men("8/1k6/8/P7/8/2K5/8/4B3 w")), draw);
    // The right bishop (light, d1... f1 is light) wins: no claim beyond the trivial bound.
    assert_eq!(
        recognize(&men("k7/8/P7/8/P7/2K5/8/5B2 w")),
        Some(Bound::AtLeastDraw)
    );
    // The king too far from the corner (c8 is not next to a8): no claim.
    assert_eq!(
        recognize(&men("2k5/8/P7/8/P7/2K5/8/4B3 w")),
        Some(Bound::AtLeastDraw)
    );
    // Black's side: h-pawns promote on h1 (light), so the dark bishop on d8 is wrong.
    assert_eq!(recognize(&men("3b4/8/2k5/7p/8/8/6K1/8 w")), draw);
    assert_eq!(recognize(&men("3b4/8/2k5/7p/8/8/6K1/8 b")), draw);
    // The light bishop on e8 is the right one; and a king on f2 does not hold h1.
    assert_eq!(
        recognize(&men("4b3/8/2k5/7p/8/8/6K1/8 w")),
        Some(Bound::AtMostDraw)
    );
    assert_eq!(
        recognize(&men("3b4/8/2k5/7p/8/8/5K2/8 w")),
        Some(Bound::AtMostDraw)
    );
}

// ---------------------------------------------------------------------------------------------
// Speed, run by hand:
//   cargo test --release --test recognize bench -- --ignored --nocapture

/// Random pawn endings: 4-8 pawns a side on ranks 2-7, kings on free squares.
fn random_endings(rng: &mut Rng, n: usize) -> Vec<Men> {
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let mut m = Men::empty(if rng.bool() {
            Color::White
        } else {
            Color::Black
        });
        for c in Color::BOTH {
            let count = rng.u8(4..9);
            let mut placed = 0;
            while placed < count {
                let sq = Square(rng.u8(8..56));
                if !m.occupied().contains(sq) {
                    m.put(c, fortress::chess::PieceType::Pawn, sq);
                    placed += 1;
                }
            }
            loop {
                let sq = Square(rng.u8(..64));
                if !m.occupied().contains(sq) {
                    m.put(c, fortress::chess::PieceType::King, sq);
                    break;
                }
            }
        }
        out.push(m);
    }
    out
}

/// The figure structures with the kings moved around: positions where fences exist.
fn fenced_endings(rng: &mut Rng, n: usize) -> Vec<Men> {
    let fens = [
        "8/5k2/1p1p4/p1p1p1p1/P1P1P1P1/1PP1P3/3P1K2/8 w",
        "8/4k3/4p1pp/p1p1P1p1/P1P1P3/6K1/6P1/8 w",
        "8/7p/3k4/p1p5/P1P1p2p/2P1P2P/5K2/8 w",
        "8/3k4/5p2/p1p1p1p1/P1P1PPP1/8/3K4/8 w",
        "8/3k4/6p1/pp2p2p/2p1P2P/8/3KP1P1/8 w",
        "8/5k1p/4p1p1/p1p1P1P1/PpP4P/8/1P2P1K1/8 w",
        "8/5k2/4p1p1/p1p1P1P1/P1P3K1/5P2/8/8 w",
    ];
    let king = fortress::chess::PieceType::King;
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let mut m = men(fens[out.len() % fens.len()]);
        for c in Color::BOTH {
            m.pieces[c.index()][king.index()] = fortress::chess::Bitboard::EMPTY;
            loop {
                let sq = Square(rng.u8(..64));
                if !m.occupied().contains(sq) {
                    m.put(c, king, sq);
                    break;
                }
            }
        }
        out.push(m);
    }
    out
}

#[test]
#[ignore]
fn bench_blockage_detector() {
    use std::time::Instant;
    // The slider tables are built on first use; keep their cost out of the KPK figure.
    let t = Instant::now();
    std::hint::black_box(fortress::chess::attacks::rook_attacks(
        Square::A1,
        Default::default(),
    ));
    println!(
        "attack tables (magic search): {:.1} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    let t = Instant::now();
    let stats = kpk::stats();
    println!(
        "KPK bitbase: {:.1} ms to compute ({} passes)",
        t.elapsed().as_secs_f64() * 1e3,
        stats.passes
    );
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".to_string());
    println!(
        "machine: {cpu}, {} logical cores, 1 thread used",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    let mut rng = Rng::with_seed(0x1234_5678_9ABC_DEF1);
    for (name, set) in [
        ("random pawn endings", random_endings(&mut rng, 4096)),
        ("figure structures", fenced_endings(&mut rng, 4096)),
    ] {
        let rounds = 200;
        let t = Instant::now();
        let mut yes = 0u64;
        for _ in 0..rounds {
            for m in &set {
                yes += cannot_win(std::hint::black_box(m), Color::White) as u64;
                yes += cannot_win(std::hint::black_box(m), Color::Black) as u64;
            }
        }
        let calls = (rounds * set.len() * 2) as f64;
        let secs = t.elapsed().as_secs_f64();
        println!(
            "{name}: uncached (one fence analysis per call): {:.2} M calls/s, {:.0} ns/call, {:.1}% blockages",
            calls / secs / 1e6,
            secs / calls * 1e9,
            100.0 * yes as f64 / calls
        );
        let mut table = BlockageTable::new(14);
        let t = Instant::now();
        for _ in 0..rounds {
            for m in &set {
                yes += table.cannot_win(std::hint::black_box(m), Color::White) as u64;
                yes += table.cannot_win(std::hint::black_box(m), Color::Black) as u64;
            }
        }
        let secs = t.elapsed().as_secs_f64();
        let s = table.stats();
        println!(
            "{name}: pawn hash (2^14 slots): {:.2} M probes/s, {:.0} ns/probe, {} hits, {} misses",
            calls / secs / 1e6,
            secs / calls * 1e9,
            s.hits,
            s.misses
        );
        assert!(yes > 0 || name.starts_with("random"));
    }
}

// ---------------------------------------------------------------------------------------------
// KNNK, checked exhaustively by hand (about a minute):
//   cargo test --release --test recognize knnk_exhaustive -- --ignored --nocapture

/// Solves KNNK by fixed-point iteration ("White mates by force", White has the knights) and
/// checks that every position the recognizer calls a draw is not a forced mate.
#[test]
#[ignore]
fn knnk_exhaustive() {
    use fortress::chess::attacks::{king_attacks, knight_attacks};
    use fortress::chess::{Bitboard, PieceType};
    const N: usize = 64 * 64 * 64 * 64;
    let idx = |wk: usize, bk: usize, n1: usize, n2: usize| ((wk * 64 + bk) * 64 + n1) * 64 + n2;
    let bb = |s: usize| Bitboard(1u64 << s);
    let valid = |wk: usize, bk: usize, n1: usize, n2: usize| {
        n1 < n2
            && wk != bk
            && wk != n1
            && wk != n2
            && bk != n1
            && bk != n2
            && Square(wk as u8).distance(Square(bk as u8)) > 1
    };
    let checks = |bk: usize, n1: usize, n2: usize| {
        knight_attacks(Square(n1 as u8)).contains(Square(bk as u8))
            || knight_attacks(Square(n2 as u8)).contains(Square(bk as u8))
    };
    // 0 unknown, 1 White mates by force, 2 not (or not a legal position).
    let mut wtm = vec![0u8; N];
    let mut btm = vec![0u8; N];
    let sorted = |a: usize, b: usize| if a < b { (a, b) } else { (b, a) };
    let mut passes = 0;
    loop {
        passes += 1;
        let mut changed = false;
        for i in 0..N {
            let (wk, bk, n1, n2) = (i >> 18, (i >> 12) & 63, (i >> 6) & 63, i & 63);
            if btm[i] == 0 {
                let v = if !valid(wk, bk, n1, n2) {
                    2
                } else {
                    let guarded = |t: usize, taken: usize| {
                        king_attacks(Square(wk as u8)).contains(Square(t as u8))
                            || (n1 != taken
                                && knight_attacks(Square(n1 as u8)).contains(Square(t as u8)))
                            || (n2 != taken
                                && knight_attacks(Square(n2 as u8)).contains(Square(t as u8)))
                    };
                    let mut any = false;
                    let mut all_won = true;
                    let mut decided_draw = false;
                    for t in king_attacks(Square(bk as u8)) {
                        let t = t.0 as usize;
                        if guarded(t, t) || t == wk {
                            continue;
                        }
                        any = true;
                        if t == n1 || t == n2 {
                            decided_draw = true; // a knight taken: KNK
                            break;
                        }
                        match wtm[idx(wk, t, n1, n2)] {
                            1 => {}
                            2 => {
                                decided_draw = true;
                                break;
                            }
                            _ => all_won = false,
                        }
                    }
                    if !any {
                        if checks(bk, n1, n2) {
                            1
                        } else {
                            2
                        }
                    } else if decided_draw {
                        2
                    } else if all_won {
                        1
                    } else {
                        0
                    }
                };
                if v != 0 {
                    btm[i] = v;
                    changed = true;
                }
            }
            if wtm[i] == 0 {
                let v = if !valid(wk, bk, n1, n2) || checks(bk, n1, n2) {
                    2
                } else {
                    let occ = bb(wk) | bb(bk) | bb(n1) | bb(n2);
                    let mut open = false;
                    let mut won = false;
                    let mut look = |j: usize| match btm[j] {
                        1 => won = true,
                        0 => open = true,
                        _ => {}
                    };
                    for t in knight_attacks(Square(n1 as u8)) & !occ {
                        let (a, b) = sorted(t.0 as usize, n2);
                        look(idx(wk, bk, a, b));
                    }
                    for t in knight_attacks(Square(n2 as u8)) & !occ {
                        let (a, b) = sorted(n1, t.0 as usize);
                        look(idx(wk, bk, a, b));
                    }
                    for t in king_attacks(Square(wk as u8)) & !occ {
                        if Square(t.0).distance(Square(bk as u8)) > 1 {
                            look(idx(t.0 as usize, bk, n1, n2));
                        }
                    }
                    if won {
                        1
                    } else if open {
                        0
                    } else {
                        2
                    }
                };
                if v != 0 {
                    wtm[i] = v;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    let (mut won_wtm, mut won_btm, mut claimed, mut wrong) = (0u64, 0u64, 0u64, 0u64);
    for i in 0..N {
        let (wk, bk, n1, n2) = (i >> 18, (i >> 12) & 63, (i >> 6) & 63, i & 63);
        if !valid(wk, bk, n1, n2) {
            continue;
        }
        won_wtm += (wtm[i] == 1) as u64;
        won_btm += (btm[i] == 1) as u64;
        for (stm, forced) in [(Color::White, wtm[i] == 1), (Color::Black, btm[i] == 1)] {
            if stm == Color::White && checks(bk, n1, n2) {
                continue; // illegal: the side not to move in check
            }
            let mut m = Men::empty(stm);
            m.put(Color::White, PieceType::King, Square(wk as u8));
            m.put(Color::Black, PieceType::King, Square(bk as u8));
            m.put(Color::White, PieceType::Knight, Square(n1 as u8));
            m.put(Color::White, PieceType::Knight, Square(n2 as u8));
            if recognize(&m) == Some(Bound::Exact(Outcome::Draw)) {
                claimed += 1;
                wrong += forced as u64;
            }
        }
    }
    println!(
        "KNNK: {passes} passes; forced mates: {won_wtm} White to move, {won_btm} Black to move; \
         {claimed} positions recognised as draws, {wrong} of them wrongly"
    );
    assert_eq!(wrong, 0);
    assert!(claimed > 0);
}

/// On random pawn endings and on the figure structures with kings scattered: the hashed probe
/// agrees with the direct one, colour mirroring gives the same answers, and `bound` combines them.
#[test]
fn random_endings_hash_and_mirror_agree() {
    let mut rng = Rng::with_seed(0x0DDB_1A5E_5BAD_5EED);
    let mut set = random_endings(&mut rng, 3000);
    set.extend(fenced_endings(&mut rng, 3000));
    let mut table = BlockageTable::new(6); // small, so slots get overwritten
    let mut blocked = 0;
    for m in &set {
        for c in Color::BOTH {
            let direct = cannot_win(m, c);
            blocked += direct as u32;
            assert_eq!(table.cannot_win(m, c), direct);
            assert_eq!(cannot_win(&m.mirrored(), !c), direct);
        }
        let us = cannot_win(m, m.side_to_move);
        let them = cannot_win(m, !m.side_to_move);
        // Each choice of wanted claims gets exactly its part.
        for (at_most_draw, at_least_draw) in [(true, true), (true, false), (false, true)] {
            let expected = match (us && at_most_draw, them && at_least_draw) {
                (true, true) => Some(Bound::Exact(Outcome::Draw)),
                (true, false) => Some(Bound::AtMostDraw),
                (false, true) => Some(Bound::AtLeastDraw),
                (false, false) => None,
            };
            let wanted = Wanted {
                at_most_draw,
                at_least_draw,
            };
            let bound = PawnEnding::of_men(m).and_then(|e| table.bound(&e, wanted));
            assert_eq!(bound, expected, "{wanted:?}");
        }
    }
    // The scattered-king figure positions must produce some blockages, or the test is vacuous.
    assert!(blocked > 100, "{blocked}");
}

// ---------------------------------------------------------------------------------------------
// The detector against the engine's own search (which knows nothing of blockages), by hand:
//   cargo test --release --test recognize against_search -- --ignored --nocapture
// Where the detector says "White cannot win", a fixed-depth search must not find White a
// promotion-sized advantage or a mate; where the paper says a pawn breaks through, it should.

/// The FEN of a recognizer position (no castling, no en passant).
fn men_to_fen(m: &Men) -> String {
    let mut fen = String::new();
    for rank in (0..8u8).rev() {
        let mut empty = 0;
        for file in 0..8u8 {
            let sq = Square::new(file, rank);
            let man = Color::BOTH.iter().find_map(|&c| {
                fortress::chess::PieceType::ALL
                    .iter()
                    .find(|&&k| m.get(c, k).contains(sq))
                    .map(|&k| fortress::chess::Piece::new(c, k).fen_char())
            });
            match man {
                Some(ch) => {
                    if empty > 0 {
                        fen.push((b'0' + empty) as char);
                        empty = 0;
                    }
                    fen.push(ch);
                }
                None => empty += 1,
            }
        }
        if empty > 0 {
            fen.push((b'0' + empty) as char);
        }
        if rank > 0 {
            fen.push('/');
        }
    }
    let stm = if m.side_to_move == Color::White {
        "w"
    } else {
        "b"
    };
    format!("{fen} {stm} - -")
}

fn search_score(fen: &str, depth: u32) -> i32 {
    use fortress::search::{Control, Engine, Limits};
    let fen = if fen.split_whitespace().count() == 2 {
        format!("{fen} - -")
    } else {
        fen.to_string()
    };
    let pos = Position::from_fen(&fen).unwrap();
    let limits = Limits {
        depth: Some(depth),
        ..Default::default()
    };
    let result = Engine::new(32).search(&pos, &limits, &Control::new(false), &mut |_| {});
    // From White's point of view.
    if pos.side_to_move() == Color::White {
        result.score
    } else {
        -result.score
    }
}

#[test]
#[ignore]
fn blockages_against_search() {
    let blocked = [
        ("2", "8/5k2/1p1p4/p1p1p1p1/P1P1P1P1/1PP1P3/3P1K2/8 w"),
        ("4", "8/4k3/8/p1p1p1p1/P1P1P1P1/2P5/4K3/8 w"),
        ("6", "8/4k3/4p1pp/p1p1P1p1/P1P1P3/6K1/6P1/8 w"),
        ("7", "8/7p/3k4/p1p5/P1P1p2p/2P1P2P/5K2/8 w"),
        ("10", "8/5k2/8/p1p1pPp1/P1P1P1P1/8/3K4/8 w"),
        ("12", "8/3k4/5p2/p1p1p1p1/P1P1PPP1/8/3K4/8 w"),
        ("13 (h4 alone)", "8/3k4/7p/p1p1p1p1/P1P1P1PP/8/3K4/8 w"),
        ("14 (no b2)", "8/3k4/6p1/pp2p2p/2p1P2P/8/3KP1P1/8 w"),
        ("15", "8/5k2/8/p1p1p1p1/P1P1P1P1/8/3K1P2/8 w"),
        ("16", "8/5k1p/4p1p1/p1p1P1P1/PpP4P/8/1P2P1K1/8 w"),
        ("18 (Kf7)", "8/5k2/4p1p1/p1p1P1P1/P1P3K1/5P2/8/8 w"),
    ];
    let broken = [
        ("9", "8/1k6/8/p1p1pPp1/P1P1P1P1/8/3K4/8 w"),
        ("11", "8/5k2/8/pPp1pPp1/P1P1P1P1/8/3K4/8 w"),
    ];
    for (name, fen) in blocked {
        assert!(white_cannot_win(fen), "figure {name}");
        let score = search_score(fen, 26);
        println!("figure {name}: detector says White cannot win; search depth 26: {score} cp");
        assert!(score < 700, "figure {name}: the search finds {score}");
    }
    // Scattered kings on the figure structures: every legal position the detector calls blocked
    // for White, with White to move, searched to depth 16.
    let mut rng = Rng::with_seed(0x5EA4_C4B1_0C4A_6E00);
    let mut checked = 0;
    for m in fenced_endings(&mut rng, 4000) {
        let (wk, bk) = (m.king(Color::White).unwrap(), m.king(Color::Black).unwrap());
        let black_in_check = fortress::chess::attacks::pawn_attacks(Color::Black, bk)
            & m.get(Color::White, fortress::chess::PieceType::Pawn);
        if m.side_to_move != Color::White
            || wk.distance(bk) < 2
            || black_in_check.any()
            || !cannot_win(&m, Color::White)
        {
            continue;
        }
        let fen = men_to_fen(&m);
        let score = search_score(&fen, 16);
        assert!(score < 700, "{fen}: the search finds {score}");
        checked += 1;
        if checked == 60 {
            break;
        }
    }
    println!("{checked} scattered-king blockages: no search score of 700 cp or more at depth 16");
    for (name, fen) in broken {
        assert!(!white_cannot_win(fen), "figure {name}");
        let score = search_score(fen, 26);
        println!("figure {name}: no blockage; search depth 26: {score} cp");
        assert!(score >= 700, "figure {name}: the search finds only {score}");
    }
}
