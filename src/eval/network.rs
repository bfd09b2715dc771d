//! A perspective network (NNUE): 768 inputs (colour of the man relative to the perspective,
//! type, square seen from the perspective's side) into one hidden layer shared by both sides,
//! the side to move's half first, then one output. The hidden layer's activation is SCReLU
//! (clamped to 0..1, squared). Weights are integers: the hidden layer's scaled by `QA`, the
//! output's by `QB`; the output times `SCALE` is centipawns for the side to move.
//!
//! File layout, little-endian: `MAGIC`, the hidden size (u32), the hidden weights (i16, one row
//! of `hidden` per input), the hidden biases (i16), the output weights (i16, 2 × hidden), the
//! output bias (i32), and an xxh3 checksum (u64) of everything before it.

use crate::chess::{Color, Piece, Position, Square};

pub const INPUTS: usize = 768;
/// The hidden layer's quantisation: a weight of 1.0 is `QA`.
pub const QA: i32 = 255;
/// The output layer's quantisation.
pub const QB: i32 = 64;
/// Centipawns of an output of 1.0.
pub const SCALE: i32 = 400;

const MAGIC: &[u8; 4] = b"FNN1";

/// The input of man `piece` on `sq` seen from `perspective`'s side.
#[inline]
pub fn feature(perspective: Color, piece: Piece, sq: Square) -> usize {
    let (relative, sq) = match perspective {
        Color::White => (piece.color != Color::White, sq.index()),
        Color::Black => (piece.color != Color::Black, sq.index() ^ 56),
    };
    relative as usize * 384 + piece.kind.index() * 64 + sq
}

#[derive(Clone, Debug, PartialEq)]
pub struct Network {
    hidden: usize,
    /// Row i (input i) is `hidden_weights[i * hidden..(i + 1) * hidden]`.
    hidden_weights: Vec<i16>,
    hidden_biases: Vec<i16>,
    /// The side to move's half, then the other's.
    output_weights: Vec<i16>,
    output_bias: i32,
}

/// Why bytes are not a network.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum NetworkError {
    #[error("not a Fortress network file")]
    Magic,
    #[error("{0} bytes, not the {1} a network of its hidden size takes")]
    Length(usize, usize),
    #[error("hidden size {0} is not 1 to 4096")]
    Hidden(usize),
    #[error("checksum mismatch: the file is damaged")]
    Checksum,
}

impl Network {
    /// A network from float weights (as the trainer holds them), rounded to the integer scales.
    pub fn quantise(
        hidden: usize,
        hidden_weights: &[f32],
        hidden_biases: &[f32],
        output_weights: &[f32],
        output_bias: f32,
    ) -> Network {
        assert_eq!(hidden_weights.len(), INPUTS * hidden);
        assert_eq!(hidden_biases.len(), hidden);
        assert_eq!(output_weights.len(), 2 * hidden);
        let q = |x: f32, k: i32| {
            (x * k as f32)
                .round()
                .clamp(i16::MIN as f32, i16::MAX as f32) as i16
        };
        Network {
            hidden,
            hidden_weights: hidden_weights.iter().map(|&x| q(x, QA)).collect(),
            hidden_biases: hidden_biases.iter().map(|&x| q(x, QA)).collect(),
            output_weights: output_weights.iter().map(|&x| q(x, QB)).collect(),
            output_bias: (output_bias * (QA * QB) as f32).round() as i32,
        }
    }

    pub fn hidden(&self) -> usize {
        self.hidden
    }

    fn byte_len(hidden: usize) -> usize {
        8 + 2 * (INPUTS * hidden + hidden + 2 * hidden) + 4 + 8
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(Network::byte_len(self.hidden));
        b.extend_from_slice(MAGIC);
        b.extend_from_slice(&(self.hidden as u32).to_le_bytes());
        for w in self
            .hidden_weights
            .iter()
            .chain(&self.hidden_biases)
            .chain(&self.output_weights)
        {
            b.extend_from_slice(&w.to_le_bytes());
        }
        b.extend_from_slice(&self.output_bias.to_le_bytes());
        let sum = xxhash_rust::xxh3::xxh3_64(&b);
        b.extend_from_slice(&sum.to_le_bytes());
        b
    }

    pub fn from_bytes(b: &[u8]) -> Result<Network, NetworkError> {
        if b.len() < 8 || &b[..4] != MAGIC {
            return Err(NetworkError::Magic);
        }
        let hidden = u32::from_le_bytes(b[4..8].try_into().expect("4 bytes")) as usize;
        if !(1..=4096).contains(&hidden) {
            return Err(NetworkError::Hidden(hidden));
        }
        let len = Network::byte_len(hidden);
        if b.len() != len {
            return Err(NetworkError::Length(b.len(), len));
        }
        let (body, sum) = b.split_at(len - 8);
        if xxhash_rust::xxh3::xxh3_64(body) != u64::from_le_bytes(sum.try_into().expect("8 bytes"))
        {
            return Err(NetworkError::Checksum);
        }
        let mut words = body[8..len - 12]
            .chunks_exact(2)
            .map(|c| i16::from_le_bytes([c[0], c[1]]));
        let mut take = |n: usize| words.by_ref().take(n).collect::<Vec<i16>>();
        let hidden_weights = take(INPUTS * hidden);
        let hidden_biases = take(hidden);
        let output_weights = take(2 * hidden);
        Ok(Network {
            hidden,
            hidden_weights,
            hidden_biases,
            output_weights,
            output_bias: i32::from_le_bytes(body[len - 12..].try_into().expect("4 bytes")),
        })
    }

    /// The evaluation of `pos` for its side to move, in centipawns, computed from scratch.
    pub fn evaluate(&self, pos: &Position) -> i32 {
        let h = self.hidden;
        let stm = pos.side_to_move();
        let mut sum: i64 = 0;
        let mut acc = vec![0i32; h];
        for (half, perspective) in [stm, !stm].into_iter().enumerate() {
            for (a, &b) in acc.iter_mut().zip(&self.hidden_biases) {
                *a = b as i32;
            }
            let mut occupied = pos.occupied().0;
            while occupied != 0 {
                let sq = Square(occupied.trailing_zeros() as u8);
                occupied &= occupied - 1;
                let piece = pos.piece_at(sq).expect("occupied");
                let row = feature(perspective, piece, sq) * h;
                for (a, &w) in acc.iter_mut().zip(&self.hidden_weights[row..row + h]) {
                    *a += w as i32;
                }
            }
            let out = &self.output_weights[half * h..(half + 1) * h];
            for (&a, &w) in acc.iter().zip(out) {
                let c = a.clamp(0, QA) as i64;
                sum += c * c * w as i64;
            }
        }
        ((sum / QA as i64 + self.output_bias as i64) * SCALE as i64 / (QA * QB) as i64) as i32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Network {
        let h = 4;
        let mut rng = fastrand::Rng::with_seed(9);
        let mut f = |n: usize, r: f32| {
            (0..n)
                .map(|_| (rng.f32() * 2.0 - 1.0) * r)
                .collect::<Vec<_>>()
        };
        let (w1, b1, w2) = (f(INPUTS * h, 0.3), f(h, 0.1), f(2 * h, 1.5));
        Network::quantise(h, &w1, &b1, &w2, 0.05)
    }

    #[test]
    fn a_network_round_trips_and_a_damaged_one_is_refused() {
        let net = small();
        let bytes = net.to_bytes();
        assert_eq!(Network::from_bytes(&bytes).unwrap(), net);
        let mut bad = bytes.clone();
        bad[100] ^= 1;
        assert_eq!(Network::from_bytes(&bad), Err(NetworkError::Checksum));
        assert_eq!(
            Network::from_bytes(&bytes[..bytes.len() - 1]),
            Err(NetworkError::Length(bytes.len() - 1, bytes.len()))
        );
        assert_eq!(Network::from_bytes(b"FNN0...."), Err(NetworkError::Magic));
    }

    /// The same position with colours flipped is the same for its side to move.
    #[test]
    fn the_evaluation_is_the_same_from_either_side() {
        let net = small();
        for fen in [
            "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
            "8/5k2/8/3p4/3P4/2B5/5K2/8 b - - 0 1",
        ] {
            let pos = Position::from_fen(fen).unwrap();
            assert_eq!(
                net.evaluate(&pos),
                net.evaluate(&pos.color_flipped()),
                "{fen}"
            );
        }
    }
}
