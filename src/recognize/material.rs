//! Material recognizers (Heinz 1998, "Efficient interior-node recognition"): for a few material
//! balances, an exact value or a sound bound known without searching. Each rule says why it holds;
//! anything not proved returns `None` and is left to the search.

use super::{kpk, Bound, Men, Outcome};
use crate::chess::attacks::{king_attacks, knight_attacks};
use crate::chess::{Bitboard, Color, PieceType, Square};

/// What the recognizers know about this position, from the side to move's point of view.
pub fn recognize(men: &Men) -> Option<Bound> {
    let (Some(_), Some(_)) = (men.king(Color::White), men.king(Color::Black)) else {
        return None;
    };
    if let Some(bound) = exact(men) {
        return Some(bound);
    }
    // A lone king can never give mate.
    let bare = |c: Color| men.color(c) == men.get(c, PieceType::King);
    let stm = men.side_to_move;
    if bare(stm) {
        Some(Bound::AtMostDraw)
    } else if bare(!stm) {
        Some(Bound::AtLeastDraw)
    } else {
        None
    }
}

fn exact(men: &Men) -> Option<Bound> {
    use PieceType::*;
    let count = |c: Color, k: PieceType| men.get(c, k).count();
    let pawns = men.get(Color::White, Pawn) | men.get(Color::Black, Pawn);
    let heavy = men.get(Color::White, Rook)
        | men.get(Color::Black, Rook)
        | men.get(Color::White, Queen)
        | men.get(Color::Black, Queen);
    if heavy.any() {
        return None;
    }
    let knights = men.get(Color::White, Knight) | men.get(Color::Black, Knight);
    let bishops = men.get(Color::White, Bishop) | men.get(Color::Black, Bishop);

    if pawns.is_empty() {
        // Dead positions: no sequence of legal moves mates. With only bishops, all on one colour,
        // a checked king stands on that colour and its orthogonal neighbours (two or more, of the
        // other colour) can be covered only by the enemy king, which cannot cover two of them
        // without standing next to the checked king. KNK likewise (FIDE 5.2.2 / 9.6.2).
        if knights.is_empty()
            && ((bishops & Bitboard::LIGHT_SQUARES).is_empty()
                || (bishops & Bitboard::DARK_SQUARES).is_empty())
        {
            return Some(Bound::Exact(Outcome::Draw));
        }
        if bishops.is_empty() && knights.count() == 1 {
            return Some(Bound::Exact(Outcome::Draw));
        }
        for strong in Color::BOTH {
            if count(strong, Knight) == 2
                && men.color(strong).count() == 3
                && men.color(!strong).count() == 1
            {
                return knnk(men, strong);
            }
        }
        return None;
    }
    if knights.any() {
        return None;
    }
    for strong in Color::BOTH {
        if men.color(!strong).count() != 1 || men.get(strong, Pawn).is_empty() {
            continue;
        }
        if bishops.is_empty() && count(strong, Pawn) == 1 {
            return kpk_value(men, strong);
        }
        if wrong_rook_pawns_held(men, strong) {
            return Some(Bound::Exact(Outcome::Draw));
        }
    }
    None
}

/// KPK from the bitbase.
fn kpk_value(men: &Men, strong: Color) -> Option<Bound> {
    let mut sk = men.king(strong)?;
    let mut wk = men.king(!strong)?;
    let mut pawn = men.get(strong, PieceType::Pawn).lsb();
    if strong == Color::Black {
        (sk, wk, pawn) = (sk.flip_rank(), wk.flip_rank(), pawn.flip_rank());
    }
    let strong_to_move = men.side_to_move == strong;
    let won = kpk::white_wins(sk, pawn, wk, strong_to_move)?;
    Some(Bound::Exact(match (won, strong_to_move) {
        (false, _) => Outcome::Draw,
        (true, true) => Outcome::Win,
        (true, false) => Outcome::Loss,
    }))
}

/// KNNK: two knights cannot force mate (the established tablebase fact: the only wins are mates in
/// one with the knights to move). So: the lone king to move and not in check, or the knights to
/// move without a mate in one, is a draw. Otherwise (check, mate in one) we leave it to the search.
fn knnk(men: &Men, strong: Color) -> Option<Bound> {
    let sk = men.king(strong)?;
    let lone = men.king(!strong)?;
    let knights = men.get(strong, PieceType::Knight);
    if knight_cover(knights, None).contains(lone) {
        return None;
    }
    if men.side_to_move == strong && knights_mate_in_one(sk, knights, lone) {
        return None;
    }
    Some(Bound::Exact(Outcome::Draw))
}

/// Does some knight move mate the lone king on `lone`? (A king move cannot give check here.)
fn knights_mate_in_one(sk: Square, knights: Bitboard, lone: Square) -> bool {
    let occupied = knights | Bitboard::from_square(sk) | Bitboard::from_square(lone);
    for from in knights {
        for to in knight_attacks(from) & !occupied {
            if !knight_attacks(to).contains(lone) {
                continue;
            }
            let after = (knights & !Bitboard::from_square(from)) | Bitboard::from_square(to);
            let escapes = king_attacks(lone) & !king_attacks(sk) & !Bitboard::from_square(sk);
            // The lone king may take a knight unless the other knight or the king guards it.
            let mut safe = false;
            for sq in escapes {
                safe |= !knight_cover(after, Some(sq)).contains(sq);
            }
            if !safe {
                return true;
            }
        }
    }
    false
}

/// Squares the knights attack, leaving out a knight standing on `taken` (captured there).
fn knight_cover(knights: Bitboard, taken: Option<Square>) -> Bitboard {
    let mut cover = Bitboard::EMPTY;
    for n in knights {
        if Some(n) != taken {
            cover |= knight_attacks(n);
        }
    }
    cover
}

/// K + bishops + rook pawns versus a lone king holding the queening corner, when no bishop can ever
/// cover that corner ("wrong bishop"). Proof of the draw, for pawns on the a-file and Black
/// defending (the rest by symmetry): the pawns can never leave the a-file (there is nothing to
/// capture), so nothing can check a8, and the White king cannot attack a8 while Black's king stands
/// on a7, b7 or b8 (all three touch each other). So Black's king, on a8 or one of those three
/// squares, always has a legal move back to a8 or stays there; a pawn promoting on a8 is taken at
/// once (no White man can guard a8). Black is never mated: at worst stalemated.
fn wrong_rook_pawns_held(men: &Men, strong: Color) -> bool {
    let pawns = men.get(strong, PieceType::Pawn);
    let bishops = men.get(strong, PieceType::Bishop);
    if men.officers(strong) != bishops || bishops.is_empty() {
        return false;
    }
    let file = pawns.lsb().file();
    if (file != 0 && file != 7) || (pawns & !Bitboard::file(file)).any() {
        return false;
    }
    let corner = Square::new(file, if strong == Color::White { 7 } else { 0 });
    let corner_colour = if Bitboard::LIGHT_SQUARES.contains(corner) {
        Bitboard::LIGHT_SQUARES
    } else {
        Bitboard::DARK_SQUARES
    };
    let Some(defender) = men.king(!strong) else {
        return false;
    };
    (bishops & corner_colour).is_empty()
        && (king_attacks(corner) | Bitboard::from_square(corner)).contains(defender)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recognize::men_from_fen;

    fn rec(fen: &str) -> Option<Bound> {
        recognize(&men_from_fen(fen))
    }

    #[test]
    fn light_and_dark_masks_agree_with_a1_dark() {
        assert!(Bitboard::DARK_SQUARES.contains(Square::A1));
        assert!(Bitboard::LIGHT_SQUARES.contains(Square::H1));
        assert!(Bitboard::LIGHT_SQUARES.contains(Square::A8));
    }

    #[test]
    fn dead_positions_are_draws() {
        let draw = Some(Bound::Exact(Outcome::Draw));
        assert_eq!(rec("8/8/4k3/8/8/3K4/8/8 w"), draw);
        assert_eq!(rec("8/8/4k3/8/8/3KB3/8/8 b"), draw);
        assert_eq!(rec("8/8/4k3/8/8/3KN3/8/8 w"), draw);
        // Bishops on c1 and f4: both dark squares.
        assert_eq!(rec("8/8/4k3/8/5b2/3K4/8/2B5 w"), draw);
        // c1 dark, e6 light: mates are possible, so nothing exact.
        assert_eq!(rec("8/8/4bk2/8/8/3K4/8/2B5 w"), None);
    }

    #[test]
    fn knnk_is_a_draw_except_mate_in_one() {
        let draw = Some(Bound::Exact(Outcome::Draw));
        assert_eq!(rec("8/8/4k3/8/8/3K4/3NN3/8 w"), draw);
        assert_eq!(rec("8/8/4k3/8/8/3K4/3NN3/8 b"), draw);
        // Kh8; White Kg6 covers g7, h7; Ne7 covers g8; Ng5-f7 mates. White to move: mate in one,
        // so only the trivial bound (the knights cannot lose) is claimed.
        assert_eq!(rec("7k/4N3/6K1/6N1/8/8/8/8 w"), Some(Bound::AtLeastDraw));
        // The same with Black to move is stalemate: a draw.
        assert_eq!(rec("7k/4N3/6K1/6N1/8/8/8/8 b"), draw);
        // Lone king in check (Ng6): left to the search, bar the trivial bound.
        assert_eq!(rec("7k/5K2/6N1/8/8/8/8/6N1 b"), Some(Bound::AtMostDraw));
        // KNNKP is not a draw by rule: the pawn can allow mates.
        assert_eq!(rec("7k/5K2/5N2/8/8/8/p7/6N1 b"), None);
    }
}
