//! The en-passant zone's squares and codes (Nalimov et al. 2001, Section 3.5; notes, section 4):
//! which squares an e.p. situation involves, and the 14 codes naming the capturing pawn's file
//! and direction.

use crate::chess::{Color, Square};

/// Number of e.p. codes: the file of the capturing pawn and its direction (notes, section 4).
pub(super) const EP_CODES: u64 = 14;

/// The squares of an en-passant situation: the target square, the pawn that just double-stepped,
/// the square it came from and the stm pawns that could capture it.
#[derive(Copy, Clone, Debug)]
pub(super) struct EpSquares {
    pub(super) ep: Square,
    pub(super) pushed: Square,
    pub(super) origin: Square,
    pub(super) capturers: u64,
}

/// The e.p. code 0..14 of a capture by the pawn on `capturer` to `ep` (notes, section 4).
#[inline(always)]
pub(super) fn ep_code(stm: Color, capturer: Square, ep: Square) -> Option<u64> {
    let f = capturer.file() as u64;
    let d = ep.0 as i16 - capturer.0 as i16;
    match (stm, d) {
        (Color::White, 7) | (Color::Black, -9) => Some(f - 1),
        (Color::White, 9) | (Color::Black, -7) => Some(f + 7),
        _ => None,
    }
}

/// Inverse of `ep_code`: (capturer, e.p. square).
#[inline(always)]
pub(super) fn ep_from_code(stm: Color, code: u64) -> (Square, Square) {
    let (file, left_of_ep) = if code < 7 {
        (code as u8 + 1, false)
    } else {
        (code as u8 - 7, true)
    };
    let rank = if stm == Color::White { 4 } else { 3 };
    let capturer = Square::new(file, rank);
    let ep = match (stm, left_of_ep) {
        (Color::White, false) => capturer.offset(7),
        (Color::White, true) => capturer.offset(9),
        (Color::Black, false) => capturer.offset(-9),
        (Color::Black, true) => capturer.offset(-7),
    };
    (capturer, ep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ep_codes_round_trip() {
        for stm in Color::BOTH {
            for code in 0..EP_CODES {
                let (c, ep) = ep_from_code(stm, code);
                assert_eq!(ep_code(stm, c, ep), Some(code));
                assert_eq!(c.file().abs_diff(ep.file()), 1);
            }
        }
    }
}
