//! Forsyth-Edwards Notation: reading with full validation, and writing.
//!
//! A FEN is refused, with the reason, when it is malformed or describes a position that cannot
//! arise: the wrong number of kings, pawns on the back ranks, too many men, the side not to move
//! in check, a castling right without its king and rook at home, an impossible en-passant square.

use super::bitboard::Bitboard;
use super::position::{Position, BLACK_OO, BLACK_OOO, WHITE_OO, WHITE_OOO};
use super::types::{Color, Piece, PieceType, Square};

pub const START_FEN: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid FEN: {0}")]
pub struct FenError(pub String);

fn err<T>(msg: impl Into<String>) -> Result<T, FenError> {
    Err(FenError(msg.into()))
}

impl Position {
    /// Reads a FEN. The two clock fields may be left out (they default to `0 1`).
    pub fn from_fen(fen: &str) -> Result<Position, FenError> {
        let fields: Vec<&str> = fen.split_whitespace().collect();
        if fields.len() < 4 || fields.len() > 6 {
            return err(format!(
                "expected 4 to 6 fields (placement, side, castling, en passant, clocks), found {}",
                fields.len()
            ));
        }
        let mut pos = Position::empty();
        parse_placement(&mut pos, fields[0])?;

        let stm = match fields[1] {
            "w" => Color::White,
            "b" => Color::Black,
            other => return err(format!("side to move must be 'w' or 'b', not '{}'", other)),
        };
        pos.set_side_to_move(stm);

        for color in Color::BOTH {
            let kings = pos.pieces(color, PieceType::King).count();
            if kings != 1 {
                return err(format!(
                    "{:?} has {} kings; exactly one is required",
                    color, kings
                ));
            }
            let pawns = pos.pieces(color, PieceType::Pawn).count();
            if pawns > 8 {
                return err(format!("{:?} has {} pawns", color, pawns));
            }
            if pos.color_bb(color).count() > 16 {
                return err(format!("{:?} has more than 16 men", color));
            }
            // Every man beyond the original set must be a promoted pawn.
            let extra: u32 = [
                (PieceType::Queen, 1),
                (PieceType::Rook, 2),
                (PieceType::Bishop, 2),
                (PieceType::Knight, 2),
            ]
            .iter()
            .map(|&(k, n)| pos.pieces(color, k).count().saturating_sub(n))
            .sum();
            if extra > 8 - pawns {
                return err(format!(
                    "{:?} has more promoted men ({}) than missing pawns ({})",
                    color,
                    extra,
                    8 - pawns
                ));
            }
        }
        if (pos.kind_bb(PieceType::Pawn) & (Bitboard::RANK_1 | Bitboard::RANK_8)).any() {
            return err("a pawn stands on the first or eighth rank");
        }

        let mut rights = 0u8;
        if fields[2] != "-" {
            for c in fields[2].chars() {
                let (bit, king, rook, name) = match c {
                    'K' => (WHITE_OO, Square::E1, Square::H1, "White's king-side"),
                    'Q' => (WHITE_OOO, Square::E1, Square::A1, "White's queen-side"),
                    'k' => (BLACK_OO, Square::E8, Square::H8, "Black's king-side"),
                    'q' => (BLACK_OOO, Square::E8, Square::A8, "Black's queen-side"),
                    _ => return err(format!("castling field '{}' has '{}'", fields[2], c)),
                };
                if rights & bit != 0 {
                    return err(format!("castling field '{}' repeats '{}'", fields[2], c));
                }
                let color = if c.is_ascii_uppercase() {
                    Color::White
                } else {
                    Color::Black
                };
                if pos.piece_at(king) != Some(Piece::new(color, PieceType::King))
                    || pos.piece_at(rook) != Some(Piece::new(color, PieceType::Rook))
                {
                    return err(format!(
                        "{} castling right needs the king on {} and the rook on {}",
                        name, king, rook
                    ));
                }
                rights |= bit;
            }
        }
        pos.set_castling(rights);

        // The side not to move may not be in check: its king would be taken.
        let them = !stm;
        if pos.is_attacked(pos.king_square(them), stm, pos.occupied()) {
            return err(format!("the side not to move ({:?}) is in check", them));
        }

        if fields[3] != "-" {
            let ep = Square::parse(fields[3]).ok_or_else(|| {
                FenError(format!("en-passant field '{}' is not a square", fields[3]))
            })?;
            // The pawn that just made a double step stands in front of the target square; the
            // target and the pawn's starting square are empty.
            let (rank, pushed, origin) = match stm {
                Color::White => (5, ep.offset(-8), ep.offset(8)),
                Color::Black => (2, ep.offset(8), ep.offset(-8)),
            };
            if ep.rank() != rank {
                return err(format!(
                    "en-passant square {} is impossible with {:?} to move",
                    ep, stm
                ));
            }
            if pos.piece_at(pushed) != Some(Piece::new(them, PieceType::Pawn))
                || pos.piece_at(ep).is_some()
                || pos.piece_at(origin).is_some()
            {
                return err(format!(
                    "en-passant square {} without a pawn that has just made a double step",
                    ep
                ));
            }
            pos.set_ep_if_capturable(ep);
        }

        let halfmove = match fields.get(4) {
            None => 0,
            Some(s) => s
                .parse::<u16>()
                .map_err(|_| FenError(format!("half-move clock '{}' is not a number", s)))?,
        };
        let fullmove = match fields.get(5) {
            None => 1,
            Some(s) => match s.parse::<u16>() {
                Ok(n) if n >= 1 => n,
                _ => return err(format!("full-move number '{}' is not a positive number", s)),
            },
        };
        pos.set_clocks(halfmove, fullmove);
        pos.refresh_checkers();
        let checkers = pos.checkers();
        if checkers.count() > 2 {
            return err("the side to move is in check from more than two men");
        }
        Ok(pos)
    }

    pub fn to_fen(&self) -> String {
        let mut s = String::with_capacity(90);
        for rank in (0..8).rev() {
            let mut empty = 0;
            for file in 0..8 {
                match self.piece_at(Square::new(file, rank)) {
                    None => empty += 1,
                    Some(p) => {
                        if empty > 0 {
                            s.push((b'0' + empty) as char);
                            empty = 0;
                        }
                        s.push(p.fen_char());
                    }
                }
            }
            if empty > 0 {
                s.push((b'0' + empty) as char);
            }
            if rank > 0 {
                s.push('/');
            }
        }
        s.push_str(if self.side_to_move() == Color::White {
            " w "
        } else {
            " b "
        });
        let rights = self.castling_rights();
        if rights == 0 {
            s.push('-');
        }
        for (bit, c) in [
            (WHITE_OO, 'K'),
            (WHITE_OOO, 'Q'),
            (BLACK_OO, 'k'),
            (BLACK_OOO, 'q'),
        ] {
            if rights & bit != 0 {
                s.push(c);
            }
        }
        match self.ep_square() {
            Some(ep) => s.push_str(&format!(" {}", ep)),
            None => s.push_str(" -"),
        }
        s.push_str(&format!(
            " {} {}",
            self.halfmove_clock(),
            self.fullmove_number()
        ));
        s
    }
}

fn parse_placement(pos: &mut Position, placement: &str) -> Result<(), FenError> {
    let ranks: Vec<&str> = placement.split('/').collect();
    if ranks.len() != 8 {
        return err(format!("placement has {} ranks, not 8", ranks.len()));
    }
    for (i, text) in ranks.iter().enumerate() {
        let rank = 7 - i as u8;
        let mut file = 0u8;
        for c in text.chars() {
            if let Some(d) = c.to_digit(10) {
                if !(1..=8).contains(&d) {
                    return err(format!("rank {} has the digit '{}'", rank + 1, c));
                }
                file += d as u8;
            } else {
                let piece = Piece::from_fen_char(c)
                    .ok_or_else(|| FenError(format!("'{}' is not a man", c)))?;
                if file >= 8 {
                    return err(format!("rank {} has more than 8 squares", rank + 1));
                }
                pos.put_piece(piece, Square::new(file, rank));
                file += 1;
            }
            if file > 8 {
                return err(format!("rank {} has more than 8 squares", rank + 1));
            }
        }
        if file != 8 {
            return err(format!("rank {} has {} squares, not 8", rank + 1, file));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(fen: &str, why: &str) {
        match Position::from_fen(fen) {
            Ok(_) => panic!("accepted an invalid FEN: {}", fen),
            Err(e) => assert!(
                e.0.contains(why),
                "'{}' gave '{}', expected '{}'",
                fen,
                e,
                why
            ),
        }
    }

    #[test]
    fn round_trip() {
        for fen in [
            START_FEN,
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
        ] {
            assert_eq!(Position::from_fen(fen).unwrap().to_fen(), fen);
        }
    }

    #[test]
    fn en_passant_kept_only_when_capturable() {
        // No white pawn can take on e6: the square is dropped from the key and the FEN.
        let p = Position::from_fen("rnbqkbnr/pppp1ppp/8/4p3/8/8/PPPPPPPP/RNBQKBNR w KQkq e6 0 2")
            .unwrap();
        assert_eq!(p.ep_square(), None);
        // The capture would expose White's king along the fifth rank.
        let p = Position::from_fen("8/8/8/K2pP2r/8/8/8/7k w - d6 0 1").unwrap();
        assert_eq!(p.ep_square(), None);
    }

    #[test]
    fn impossible_positions_are_refused() {
        refused("8/8/8/8/8/8/8/8 w - - 0 1", "kings");
        refused("4k3/8/8/8/8/8/8/3KK3 w - - 0 1", "2 kings");
        refused("4k3/8/8/8/8/8/8/P3K3 w - - 0 1", "first or eighth rank");
        refused("4k3/4Q3/8/8/8/8/8/4K3 w - - 0 1", "not to move");
        refused("4k3/8/8/8/8/8/8/4K3 w K - 0 1", "castling right");
        refused("4k3/8/8/8/8/8/8/4K3 w - e6 0 1", "double step");
        refused("4k3/8/8/8/8/8/8/4K3 w - e3 0 1", "impossible");
        refused("4k3/8/8/8/8/8/8/4K3 x - - 0 1", "side to move");
        refused("4k3/8/8/8/8/8/8/4K2 w - - 0 1", "squares");
        refused("4k3/8/8/8/8/8/8/4K3/8 w - - 0 1", "ranks");
        refused("4k3/8/8/8/8/8/8/4KX2 w - - 0 1", "not a man");
        refused("4k3/8/8/8/8/8/8/4K3 w - - x 1", "half-move");
        refused("4k3/8/8/8/8/8/8/4K3 w - - 0 0", "full-move");
        refused("4k3/8/8/8/8/8/8/4K3", "fields");
        refused("QQQQQQQQ/QQQQQQQQ/8/8/8/8/8/k3K3 w - - 0 1", "16 men");
        refused("QQQk4/8/8/8/8/8/PPPPPPPP/4K3 w - - 0 1", "promoted");
    }
}
