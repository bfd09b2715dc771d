//! Static exchange evaluation: the material balance of the capture sequence on one square, each
//! side recapturing with its least valuable attacker and free to stop. Used to order captures and
//! to prune losing ones in quiescence.

use crate::chess::attacks::{bishop_attacks, rook_attacks};
use crate::chess::{Bitboard, Move, MoveKind, PieceType, Position};

pub const SEE_VALUES: [i32; 6] = [100, 320, 330, 500, 950, 20_000];

/// Whether the exchange started by `m` gains at least `threshold` centipawns for the mover.
pub fn see_ge(pos: &Position, m: Move, threshold: i32) -> bool {
    if matches!(
        m.kind(),
        MoveKind::Castle | MoveKind::EnPassant | MoveKind::Promotion(_)
    ) {
        return 0 >= threshold;
    }
    let from = m.from();
    let to = m.to();
    let mut swap = pos.piece_at(to).map_or(0, |p| SEE_VALUES[p.kind.index()]) - threshold;
    if swap < 0 {
        return false;
    }
    let mover = pos
        .piece_at(from)
        .expect("see: a man on the from square")
        .kind;
    swap = SEE_VALUES[mover.index()] - swap;
    if swap <= 0 {
        return true;
    }
    let mut occ = pos.occupied() ^ Bitboard::from_square(from) ^ Bitboard::from_square(to);
    let mut stm = pos.side_to_move();
    let mut attackers = pos.attackers_to(to, occ) & occ;
    let diag = pos.kind_bb(PieceType::Bishop) | pos.kind_bb(PieceType::Queen);
    let orth = pos.kind_bb(PieceType::Rook) | pos.kind_bb(PieceType::Queen);
    let mut result = true;
    loop {
        stm = !stm;
        attackers &= occ;
        let ours = attackers & pos.color_bb(stm);
        if ours.is_empty() {
            break;
        }
        result = !result;
        // The least valuable attacker recaptures; sliders behind it join in (x-rays).
        let mut kind = PieceType::King;
        for k in PieceType::ALL {
            if (ours & pos.kind_bb(k)).any() {
                kind = k;
                break;
            }
        }
        if kind == PieceType::King {
            // The king may recapture only if the other side has nothing left to attack with.
            if (attackers & pos.color_bb(!stm)).any() {
                result = !result;
            }
            break;
        }
        swap = SEE_VALUES[kind.index()] - swap;
        if swap < result as i32 {
            break;
        }
        let sq = (ours & pos.kind_bb(kind)).lsb();
        occ ^= Bitboard::from_square(sq);
        if matches!(kind, PieceType::Pawn | PieceType::Bishop | PieceType::Queen) {
            attackers |= bishop_attacks(to, occ) & diag;
        }
        if matches!(kind, PieceType::Rook | PieceType::Queen) {
            attackers |= rook_attacks(to, occ) & orth;
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::parse_uci_move;

    fn see(fen: &str, mv: &str, threshold: i32) -> bool {
        let pos = Position::from_fen(fen).unwrap();
        let m = parse_uci_move(&pos, mv).unwrap();
        see_ge(&pos, m, threshold)
    }

    #[test]
    fn exchanges() {
        // Rook takes an undefended pawn: wins exactly a pawn.
        let fen = "1k1r4/1pp4p/p7/4p3/8/P5P1/1PP4P/2K1R3 w - - 0 1";
        assert!(see(fen, "e1e5", 100));
        assert!(!see(fen, "e1e5", 101));
        // Knight takes a pawn defended by a pawn: -220.
        let fen = "4k3/8/3p4/4p3/8/5N2/8/4K3 w - - 0 1";
        assert!(see(fen, "f3e5", -220));
        assert!(!see(fen, "f3e5", -219));
        // Queen takes a pawn defended by a rook behind a rook (x-ray).
        let fen = "3rk3/3r4/8/3p4/8/8/3Q4/3RK3 w - - 0 1";
        assert!(!see(fen, "d2d5", 0));
    }
}
