//! Legal move generation. Moves are filtered for legality as they are made (check evasion masks,
//! pin lines, king-destination attacks, en-passant exposure), so every move in the list is legal.
//!
//! Two halves are available for staged search: `Captures` (captures, en passant, queen
//! promotions) and `Quiets` (everything else, under-promotions included); together they are `All`.

use super::attacks::{
    between, bishop_attacks, king_attacks, knight_attacks, line, pawn_attacks, queen_attacks,
    rook_attacks,
};
use super::bitboard::Bitboard;
use super::position::{Position, BLACK_OO, BLACK_OOO, WHITE_OO, WHITE_OOO};
use super::types::{Color, Move, PieceType, Square};

pub const MAX_MOVES: usize = 256;

/// A fixed-capacity move list: generation never allocates.
#[derive(Clone)]
pub struct MoveList {
    moves: [Move; MAX_MOVES],
    len: usize,
}

impl Default for MoveList {
    fn default() -> Self {
        MoveList::new()
    }
}

impl MoveList {
    #[inline(always)]
    pub fn new() -> MoveList {
        MoveList {
            moves: [Move::NONE; MAX_MOVES],
            len: 0,
        }
    }
    #[inline(always)]
    fn push(&mut self, m: Move) {
        self.moves[self.len] = m;
        self.len += 1;
    }
    #[inline(always)]
    pub fn clear(&mut self) {
        self.len = 0;
    }
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    #[inline(always)]
    pub fn as_slice(&self) -> &[Move] {
        &self.moves[..self.len]
    }
    #[inline(always)]
    pub fn as_mut_slice(&mut self) -> &mut [Move] {
        &mut self.moves[..self.len]
    }
    pub fn iter(&self) -> impl Iterator<Item = Move> + '_ {
        self.as_slice().iter().copied()
    }
    pub fn contains(&self, m: Move) -> bool {
        self.as_slice().contains(&m)
    }
}

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Gen {
    All,
    Captures,
    Quiets,
}

/// Appends the legal moves of kind `gen` to `list`.
pub fn generate(pos: &Position, gen: Gen, list: &mut MoveList) {
    match gen {
        Gen::All => generate_into::<true, true>(pos, list),
        Gen::Captures => generate_into::<true, false>(pos, list),
        Gen::Quiets => generate_into::<false, true>(pos, list),
    }
}

/// All legal moves.
pub fn legal_moves(pos: &Position) -> MoveList {
    let mut list = MoveList::new();
    generate(pos, Gen::All, &mut list);
    list
}

#[inline(always)]
fn push_promotions<const CAPTURES: bool, const QUIETS: bool>(
    list: &mut MoveList,
    from: Square,
    to: Square,
    is_capture: bool,
) {
    // A capture-promotion is noisy whatever the piece; a push is noisy only as a queen.
    if CAPTURES {
        list.push(Move::promotion(from, to, PieceType::Queen));
    }
    let under = if is_capture { CAPTURES } else { QUIETS };
    if under {
        list.push(Move::promotion(from, to, PieceType::Rook));
        list.push(Move::promotion(from, to, PieceType::Bishop));
        list.push(Move::promotion(from, to, PieceType::Knight));
    }
}

fn generate_into<const CAPTURES: bool, const QUIETS: bool>(pos: &Position, list: &mut MoveList) {
    let us = pos.side_to_move();
    let them = !us;
    let occ = pos.occupied();
    let theirs = pos.color_bb(them);
    let ksq = pos.king_square(us);
    let checkers = pos.checkers();

    let mut dest_kinds = Bitboard::EMPTY;
    if CAPTURES {
        dest_kinds |= theirs;
    }
    if QUIETS {
        dest_kinds |= !occ;
    }

    // King moves: the king must not stay on a line it blocks itself, so test with it removed.
    let occ_without_king = occ ^ Bitboard::from_square(ksq);
    for to in king_attacks(ksq) & dest_kinds {
        if !pos.is_attacked(to, them, occ_without_king) {
            list.push(Move::normal(ksq, to));
        }
    }
    if checkers.more_than_one() {
        return;
    }
    let target = if checkers.any() {
        between(ksq, checkers.lsb()) | checkers
    } else {
        Bitboard::ALL
    };
    let dest = dest_kinds & target;
    let pinned = pos.pinned(us);

    // Knights: a pinned knight can never move.
    for from in pos.pieces(us, PieceType::Knight) & !pinned {
        for to in knight_attacks(from) & dest {
            list.push(Move::normal(from, to));
        }
    }
    let diag = pos.pieces(us, PieceType::Bishop) | pos.pieces(us, PieceType::Queen);
    let orth = pos.pieces(us, PieceType::Rook) | pos.pieces(us, PieceType::Queen);
    for from in diag & !orth {
        let mut to_set = bishop_attacks(from, occ) & dest;
        if pinned.contains(from) {
            to_set &= line(ksq, from);
        }
        for to in to_set {
            list.push(Move::normal(from, to));
        }
    }
    for from in orth & !diag {
        let mut to_set = rook_attacks(from, occ) & dest;
        if pinned.contains(from) {
            to_set &= line(ksq, from);
        }
        for to in to_set {
            list.push(Move::normal(from, to));
        }
    }
    for from in diag & orth {
        let mut to_set = queen_attacks(from, occ) & dest;
        if pinned.contains(from) {
            to_set &= line(ksq, from);
        }
        for to in to_set {
            list.push(Move::normal(from, to));
        }
    }

    generate_pawn_moves::<CAPTURES, QUIETS>(pos, list, target, pinned, ksq);

    if QUIETS && checkers.is_empty() {
        generate_castling(pos, list, us);
    }
}

fn generate_pawn_moves<const CAPTURES: bool, const QUIETS: bool>(
    pos: &Position,
    list: &mut MoveList,
    target: Bitboard,
    pinned: Bitboard,
    ksq: Square,
) {
    let us = pos.side_to_move();
    let them = !us;
    let occ = pos.occupied();
    let empty = !occ;
    let theirs = pos.color_bb(them);
    let pawns = pos.pieces(us, PieceType::Pawn);
    let (promo_rank, third_rank, up) = match us {
        Color::White => (Bitboard::rank(7), Bitboard::rank(2), 8i8),
        Color::Black => (Bitboard::rank(0), Bitboard::rank(5), -8i8),
    };
    let advance = |b: Bitboard| match us {
        Color::White => b.north(),
        Color::Black => b.south(),
    };

    // Unpinned pawns, set-wise.
    let free = pawns & !pinned;
    let single = advance(free) & empty;
    let double = advance(single & third_rank) & empty & target;
    let single = single & target;
    if QUIETS {
        for to in single & !promo_rank {
            list.push(Move::normal(to.offset(-up), to));
        }
        for to in double {
            list.push(Move::double_push(to.offset(-2 * up), to));
        }
    }
    for to in single & promo_rank {
        push_promotions::<CAPTURES, QUIETS>(list, to.offset(-up), to, false);
    }
    let left = match us {
        Color::White => free.west().north(),
        Color::Black => free.west().south(),
    } & theirs
        & target;
    let right = match us {
        Color::White => free.east().north(),
        Color::Black => free.east().south(),
    } & theirs
        & target;
    for (set, delta) in [(left, up - 1), (right, up + 1)] {
        if CAPTURES {
            for to in set & !promo_rank {
                list.push(Move::normal(to.offset(-delta), to));
            }
        }
        for to in set & promo_rank {
            push_promotions::<CAPTURES, QUIETS>(list, to.offset(-delta), to, true);
        }
    }

    // Pinned pawns move only along the pin line (never when the king is in check: a pinned man
    // cannot resolve a check).
    if pos.in_check() {
        // fall through to en passant below
    } else {
        for from in pawns & pinned {
            let pin_line = line(ksq, from);
            let one = from.offset(up);
            if !occ.contains(one) && pin_line.contains(one) {
                if promo_rank.contains(one) {
                    push_promotions::<CAPTURES, QUIETS>(list, from, one, false);
                } else if QUIETS {
                    list.push(Move::normal(from, one));
                    let two = one.offset(up);
                    if third_rank.contains(one) && !occ.contains(two) {
                        list.push(Move::double_push(from, two));
                    }
                }
            }
            for to in pawn_attacks(us, from) & theirs & pin_line {
                if promo_rank.contains(to) {
                    push_promotions::<CAPTURES, QUIETS>(list, from, to, true);
                } else if CAPTURES {
                    list.push(Move::normal(from, to));
                }
            }
        }
    }

    if CAPTURES {
        if let Some(ep) = pos.ep_square() {
            for from in pawn_attacks(them, ep) & pawns {
                if pos.ep_capture_is_legal(from, ep) {
                    list.push(Move::en_passant(from, ep));
                }
            }
        }
    }
}

fn generate_castling(pos: &Position, list: &mut MoveList, us: Color) {
    let rights = pos.castling_rights();
    let occ = pos.occupied();
    let them = !us;
    let (oo, ooo, king_from) = match us {
        Color::White => (WHITE_OO, WHITE_OOO, Square::E1),
        Color::Black => (BLACK_OO, BLACK_OOO, Square::E8),
    };
    // (right, rook square, king destination)
    let sides = [
        (oo, Square(king_from.0 + 3), Square(king_from.0 + 2)),
        (ooo, Square(king_from.0 - 4), Square(king_from.0 - 2)),
    ];
    for (right, rook_sq, king_to) in sides {
        if rights & right == 0 || (between(king_from, rook_sq) & occ).any() {
            continue;
        }
        // The king may not pass through or land on an attacked square.
        let path = between(king_from, king_to) | Bitboard::from_square(king_to);
        if path.into_iter().all(|s| !pos.is_attacked(s, them, occ)) {
            list.push(Move::castle(king_from, king_to));
        }
    }
}

/// Parses a move in UCI notation (`e2e4`, `e7e8q`, `e1g1`) against the legal moves of `pos`.
pub fn parse_uci_move(pos: &Position, text: &str) -> Option<Move> {
    legal_moves(pos).iter().find(|m| m.to_string() == text)
}
