//! A perspective network (NNUE): 768 inputs (colour of the man relative to the perspective,
//! type, square seen from the perspective's side) into one hidden layer shared by both sides,
//! the side to move's half first, then one output. The output layer may come in several
//! buckets, one chosen by the number of men on the board (`output_bucket`): an ending and a
//! middlegame weigh the same hidden features differently. The hidden layer's activation is
//! SCReLU (clamped to 0..1, squared). Weights are integers: the hidden layer's scaled by `QA`,
//! the output's by `QB`; the output times `SCALE` is centipawns for the side to move.
//!
//! File layout, little-endian: `MAGIC` and the hidden size (u32), then, in `MAGIC_BUCKETS`
//! files only, the number of output buckets (u32; a `MAGIC` file has one); the hidden weights
//! (i16, one row of `hidden` per input), the hidden biases (i16), each bucket's output weights
//! (i16, 2 × hidden), each bucket's output bias (i32), and an xxh3 checksum (u64) of
//! everything before it.

use crate::chess::position::castling_rook;
use crate::chess::{Color, Move, MoveKind, Piece, PieceType, Position, Square};
use std::sync::Arc;

pub const INPUTS: usize = 768;
/// The hidden layer's quantisation: a weight of 1.0 is `QA`.
pub const QA: i32 = 255;
/// The output layer's quantisation.
pub const QB: i32 = 64;
/// Centipawns of an output of 1.0.
pub const SCALE: i32 = 400;

const MAGIC: &[u8; 4] = b"FNN1";
const MAGIC_BUCKETS: &[u8; 4] = b"FNN2";
/// The most output buckets a file may have: one per number of men from 2 to 32.
pub const MAX_BUCKETS: usize = 31;

/// The output bucket of a position with `men` men (kings included), of `buckets`: equal
/// shares of the range 2 to 32 men.
#[inline]
pub fn output_bucket(men: usize, buckets: usize) -> usize {
    ((men.saturating_sub(2)) * buckets / 31).min(buckets - 1)
}

/// The largest output weight: with it, the output layer's integer sums cannot overflow
/// (`kernels::screlu_dot`). The trainer keeps its float weights within `OUTPUT_LIMIT / QB`.
pub const OUTPUT_LIMIT: i16 = 127;

/// The hidden layer's sums for both perspectives (White's, then Black's), kept up to date move
/// by move (`Network::update`) instead of summed afresh at every node.
#[derive(Clone, Debug, PartialEq)]
pub struct Accumulator {
    sums: [Vec<i16>; 2],
}

impl Accumulator {
    pub fn new(hidden: usize) -> Accumulator {
        Accumulator {
            sums: [vec![0; hidden], vec![0; hidden]],
        }
    }

    /// The size of the hidden layer it accumulates.
    pub fn hidden(&self) -> usize {
        self.sums[0].len()
    }
}

/// The men a move takes off and puts on the board: one of each for most moves; two off for a
/// capture (en passant and capturing promotions among them); two of each for castling.
struct Changes {
    off: [(Piece, Square); 2],
    on: [(Piece, Square); 2],
    offs: usize,
    ons: usize,
}

impl Changes {
    fn of(pos: &Position, m: Move) -> Changes {
        let (from, to) = (m.from(), m.to());
        let piece = pos.piece_at(from).expect("a man on the from square");
        let us = piece.color;
        let mut c = Changes {
            off: [(piece, from); 2],
            on: [(piece, to); 2],
            offs: 1,
            ons: 1,
        };
        match m.kind() {
            MoveKind::Castle => {
                let (rook_from, rook_to) = castling_rook(to);
                let rook = Piece::new(us, PieceType::Rook);
                c.off[1] = (rook, rook_from);
                c.on[1] = (rook, rook_to);
                c.offs = 2;
                c.ons = 2;
            }
            MoveKind::EnPassant => {
                c.off[1] = (Piece::new(!us, PieceType::Pawn), to.offset(-us.forward()));
                c.offs = 2;
            }
            kind => {
                if let Some(captured) = pos.piece_at(to) {
                    c.off[1] = (captured, to);
                    c.offs = 2;
                }
                if let MoveKind::Promotion(k) = kind {
                    c.on[0] = (Piece::new(us, k), to);
                }
            }
        }
        c
    }
}

/// The inner loops, compiled for each instruction set and chosen at run time (AVX-512, AVX2,
/// SSE4.1, or the portable build). All arithmetic is on integers, so every version gives the
/// same result as the portable one.
mod kernels {
    use super::QA;
    use multiversion::multiversion;

    /// Each kernel twice: `name`, dispatched at run time to the best build for the processor,
    /// and `name_portable`, the plain build (the fallback, and the reference in tests).
    macro_rules! kernel {
        ($(#[$doc:meta])* fn $name:ident / $portable:ident ($($arg:ident: $ty:ty),*) $(-> $ret:ty)? $body:block) => {
            $(#[$doc])*
            #[inline(always)]
            pub fn $portable($($arg: $ty),*) $(-> $ret)? $body

            #[multiversion(targets("x86_64+avx512f+avx512bw", "x86_64+avx2", "x86_64+sse4.1"))]
            pub fn $name($($arg: $ty),*) $(-> $ret)? {
                $portable($($arg),*)
            }
        };
    }

    kernel! {
        /// `child = parent - a + b`, lane by lane, wrapping (as a fresh sum would wrap alike).
        fn sub_add / sub_add_portable(child: &mut [i16], parent: &[i16], a: &[i16], b: &[i16]) {
            for (((c, &p), &a), &b) in child.iter_mut().zip(parent).zip(a).zip(b) {
                *c = p.wrapping_sub(a).wrapping_add(b);
            }
        }
    }

    kernel! {
        /// `child = parent - a[0] - a[1] + b`.
        fn sub2_add / sub2_add_portable(child: &mut [i16], parent: &[i16], a: [&[i16]; 2], b: &[i16]) {
            for ((((c, &p), &a1), &a2), &b) in child.iter_mut().zip(parent).zip(a[0]).zip(a[1]).zip(b) {
                *c = p.wrapping_sub(a1).wrapping_sub(a2).wrapping_add(b);
            }
        }
    }

    kernel! {
        /// `child = parent - a[0] - a[1] + b[0] + b[1]`.
        fn sub2_add2 / sub2_add2_portable(child: &mut [i16], parent: &[i16], a: [&[i16]; 2], b: [&[i16]; 2]) {
            let lanes = child.iter_mut().zip(parent).zip(a[0]).zip(a[1]);
            for ((((c, &p), &a1), &a2), (&b1, &b2)) in lanes.zip(b[0].iter().zip(b[1])) {
                *c = p
                    .wrapping_sub(a1)
                    .wrapping_sub(a2)
                    .wrapping_add(b1)
                    .wrapping_add(b2);
            }
        }
    }

    kernel! {
        /// `sums += row`.
        fn add / add_portable(sums: &mut [i16], row: &[i16]) {
            for (s, &w) in sums.iter_mut().zip(row) {
                *s = s.wrapping_add(w);
            }
        }
    }

    kernel! {
        /// The sum of SCReLU(a) × w over the lanes, SCReLU(a) = clamp(a, 0, QA)². With |w| ≤ 127
        /// (`OUTPUT_LIMIT`), clamp(a) × w fits an i16 and 256 lanes of it times clamp(a) again
        /// fit an i32 (256 × 255² × 127 < 2³¹), so each block of 256 is summed exactly in i32.
        fn screlu_dot / screlu_dot_portable(acc: &[i16], w: &[i16]) -> i64 {
            let mut total = 0i64;
            for (a, w) in acc.chunks(256).zip(w.chunks(256)) {
                let mut block = 0i32;
                for (&a, &w) in a.iter().zip(w) {
                    let c = a.clamp(0, QA as i16);
                    block += (c * w) as i32 * c as i32;
                }
                total += block as i64;
            }
            total
        }
    }
}

/// The input of man `piece` on `sq` seen from `perspective`'s side.
#[inline]
pub fn feature(perspective: Color, piece: Piece, sq: Square) -> usize {
    let (relative, sq) = match perspective {
        Color::White => (piece.color != Color::White, sq.index()),
        Color::Black => (piece.color != Color::Black, sq.index() ^ 56),
    };
    relative as usize * 384 + piece.kind.index() * 64 + sq
}

/// The network built into the binary, trained on Fortress's own games (see `docs/`).
static BUILT_IN: once_cell::sync::Lazy<Arc<Network>> = once_cell::sync::Lazy::new(|| {
    Arc::new(
        Network::from_bytes(include_bytes!("fortress.nnue"))
            .expect("the built-in network is valid"),
    )
});

#[derive(Clone, Debug, PartialEq)]
pub struct Network {
    hidden: usize,
    buckets: usize,
    /// Row i (input i) is `hidden_weights[i * hidden..(i + 1) * hidden]`.
    hidden_weights: Vec<i16>,
    hidden_biases: Vec<i16>,
    /// Bucket by bucket, 2 × hidden each: the side to move's half, then the other's.
    output_weights: Vec<i16>,
    output_biases: Vec<i32>,
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
    #[error("{0} output buckets, not 1 to {MAX_BUCKETS}")]
    Buckets(usize),
    #[error("checksum mismatch: the file is damaged")]
    Checksum,
    #[error("an output weight beyond ±{OUTPUT_LIMIT}")]
    OutputWeight,
}

impl Network {
    pub fn built_in() -> Arc<Network> {
        BUILT_IN.clone()
    }

    /// The network in file `path`, or why it cannot be one.
    pub fn load(path: &std::path::Path) -> Result<Network, String> {
        let bytes =
            std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Network::from_bytes(&bytes).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// A network from float weights (as the trainer holds them), rounded to the integer scales.
    /// `output_weights` and `output_biases` are bucket by bucket, as in the file.
    pub fn quantise(
        hidden: usize,
        hidden_weights: &[f32],
        hidden_biases: &[f32],
        output_weights: &[f32],
        output_biases: &[f32],
    ) -> Network {
        let buckets = output_biases.len();
        assert!((1..=MAX_BUCKETS).contains(&buckets));
        assert_eq!(hidden_weights.len(), INPUTS * hidden);
        assert_eq!(hidden_biases.len(), hidden);
        assert_eq!(output_weights.len(), buckets * 2 * hidden);
        let q = |x: f32, k: i32| {
            (x * k as f32)
                .round()
                .clamp(i16::MIN as f32, i16::MAX as f32) as i16
        };
        Network {
            hidden,
            buckets,
            hidden_weights: hidden_weights.iter().map(|&x| q(x, QA)).collect(),
            hidden_biases: hidden_biases.iter().map(|&x| q(x, QA)).collect(),
            output_weights: output_weights
                .iter()
                .map(|&x| q(x, QB).clamp(-OUTPUT_LIMIT, OUTPUT_LIMIT))
                .collect(),
            output_biases: output_biases
                .iter()
                .map(|&b| (b * (QA * QB) as f32).round() as i32)
                .collect(),
        }
    }

    /// The checksum of the network's file: names a network in records of what made them.
    pub fn checksum(&self) -> u64 {
        xxhash_rust::xxh3::xxh3_64(&self.to_bytes())
    }

    pub fn hidden(&self) -> usize {
        self.hidden
    }

    pub fn buckets(&self) -> usize {
        self.buckets
    }

    /// The header's bytes: a one-bucket network keeps the first layout.
    fn header_len(buckets: usize) -> usize {
        if buckets == 1 {
            8
        } else {
            12
        }
    }

    fn byte_len(hidden: usize, buckets: usize) -> usize {
        Network::header_len(buckets)
            + 2 * (INPUTS * hidden + hidden + buckets * 2 * hidden)
            + 4 * buckets
            + 8
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(Network::byte_len(self.hidden, self.buckets));
        b.extend_from_slice(if self.buckets == 1 {
            MAGIC
        } else {
            MAGIC_BUCKETS
        });
        b.extend_from_slice(&(self.hidden as u32).to_le_bytes());
        if self.buckets > 1 {
            b.extend_from_slice(&(self.buckets as u32).to_le_bytes());
        }
        for w in self
            .hidden_weights
            .iter()
            .chain(&self.hidden_biases)
            .chain(&self.output_weights)
        {
            b.extend_from_slice(&w.to_le_bytes());
        }
        for bias in &self.output_biases {
            b.extend_from_slice(&bias.to_le_bytes());
        }
        let sum = xxhash_rust::xxh3::xxh3_64(&b);
        b.extend_from_slice(&sum.to_le_bytes());
        b
    }

    pub fn from_bytes(b: &[u8]) -> Result<Network, NetworkError> {
        let word = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes")) as usize;
        let buckets = match b.get(..4) {
            Some(m) if m == MAGIC && b.len() >= 8 => 1,
            Some(m) if m == MAGIC_BUCKETS && b.len() >= 12 => word(8),
            _ => return Err(NetworkError::Magic),
        };
        let hidden = word(4);
        if !(1..=4096).contains(&hidden) {
            return Err(NetworkError::Hidden(hidden));
        }
        if !(1..=MAX_BUCKETS).contains(&buckets) {
            return Err(NetworkError::Buckets(buckets));
        }
        let len = Network::byte_len(hidden, buckets);
        if b.len() != len {
            return Err(NetworkError::Length(b.len(), len));
        }
        let (body, sum) = b.split_at(len - 8);
        if xxhash_rust::xxh3::xxh3_64(body) != u64::from_le_bytes(sum.try_into().expect("8 bytes"))
        {
            return Err(NetworkError::Checksum);
        }
        let biases_at = body.len() - 4 * buckets;
        let mut words = body[Network::header_len(buckets)..biases_at]
            .chunks_exact(2)
            .map(|c| i16::from_le_bytes([c[0], c[1]]));
        let mut take = |n: usize| words.by_ref().take(n).collect::<Vec<i16>>();
        let hidden_weights = take(INPUTS * hidden);
        let hidden_biases = take(hidden);
        let output_weights = take(buckets * 2 * hidden);
        if output_weights.iter().any(|w| w.abs() > OUTPUT_LIMIT) {
            return Err(NetworkError::OutputWeight);
        }
        let output_biases = body[biases_at..]
            .chunks_exact(4)
            .map(|c| i32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect();
        Ok(Network {
            hidden,
            buckets,
            hidden_weights,
            hidden_biases,
            output_weights,
            output_biases,
        })
    }

    /// `acc` for `pos`, summed from scratch.
    pub fn refresh(&self, pos: &Position, acc: &mut Accumulator) {
        for perspective in Color::BOTH {
            let sums = &mut acc.sums[perspective.index()];
            sums.copy_from_slice(&self.hidden_biases);
            let mut occupied = pos.occupied().0;
            while occupied != 0 {
                let sq = Square(occupied.trailing_zeros() as u8);
                occupied &= occupied - 1;
                let piece = pos.piece_at(sq).expect("occupied");
                kernels::add(sums, self.row(feature(perspective, piece, sq)));
            }
        }
    }

    #[inline]
    fn row(&self, input: usize) -> &[i16] {
        &self.hidden_weights[input * self.hidden..(input + 1) * self.hidden]
    }

    /// `child` = `parent` after move `m` of `pos` (the position before it): the rows of the men
    /// the move takes off subtracted, those it puts on added, in one pass. No allocation.
    pub fn update(&self, parent: &Accumulator, child: &mut Accumulator, pos: &Position, m: Move) {
        let c = Changes::of(pos, m);
        for perspective in Color::BOTH {
            let i = perspective.index();
            let row = |(piece, sq): (Piece, Square)| self.row(feature(perspective, piece, sq));
            let (p, ch) = (&parent.sums[i], &mut child.sums[i]);
            match (c.offs, c.ons) {
                (1, 1) => kernels::sub_add(ch, p, row(c.off[0]), row(c.on[0])),
                (2, 1) => kernels::sub2_add(ch, p, [row(c.off[0]), row(c.off[1])], row(c.on[0])),
                _ => kernels::sub2_add2(
                    ch,
                    p,
                    [row(c.off[0]), row(c.off[1])],
                    [row(c.on[0]), row(c.on[1])],
                ),
            }
        }
    }

    /// `child` = `parent`: for a null move, which changes no man.
    pub fn copy(parent: &Accumulator, child: &mut Accumulator) {
        for (c, p) in child.sums.iter_mut().zip(&parent.sums) {
            c.copy_from_slice(p);
        }
    }

    /// The evaluation of `pos` for its side to move, in centipawns, from its up-to-date
    /// accumulator.
    pub fn evaluate_accumulated(&self, acc: &Accumulator, pos: &Position) -> i32 {
        let h = self.hidden;
        let stm = pos.side_to_move();
        let bucket = output_bucket(pos.occupied().count() as usize, self.buckets);
        let weights = &self.output_weights[bucket * 2 * h..(bucket + 1) * 2 * h];
        let ours = kernels::screlu_dot(&acc.sums[stm.index()], &weights[..h]);
        let theirs = kernels::screlu_dot(&acc.sums[(!stm).index()], &weights[h..]);
        let bias = self.output_biases[bucket] as i64;
        (((ours + theirs) / QA as i64 + bias) * SCALE as i64 / (QA * QB) as i64) as i32
    }

    /// The evaluation of `pos` for its side to move, in centipawns, computed from scratch.
    pub fn evaluate(&self, pos: &Position) -> i32 {
        let mut acc = Accumulator::new(self.hidden);
        self.refresh(pos, &mut acc);
        self.evaluate_accumulated(&acc, pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Network {
        small_with(1)
    }

    fn small_with(buckets: usize) -> Network {
        let h = 4;
        let mut rng = fastrand::Rng::with_seed(9);
        let mut f = |n: usize, r: f32| {
            (0..n)
                .map(|_| (rng.f32() * 2.0 - 1.0) * r)
                .collect::<Vec<_>>()
        };
        let (w1, b1, w2) = (f(INPUTS * h, 0.3), f(h, 0.1), f(buckets * 2 * h, 1.5));
        Network::quantise(h, &w1, &b1, &w2, &f(buckets, 0.05))
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

        let bucketed = small_with(8);
        let bytes = bucketed.to_bytes();
        assert_eq!(&bytes[..4], b"FNN2");
        assert_eq!(Network::from_bytes(&bytes).unwrap(), bucketed);
        let mut bad = bytes.clone();
        bad[8] = 40;
        assert_eq!(Network::from_bytes(&bad), Err(NetworkError::Buckets(40)));
    }

    /// Buckets split 2 to 32 men into equal shares; each position's evaluation uses its own.
    #[test]
    fn each_number_of_men_has_its_output_bucket() {
        let buckets: Vec<usize> = (2..=32).map(|men| output_bucket(men, 8)).collect();
        assert_eq!(buckets[0], 0);
        assert_eq!(buckets[30], 7);
        assert!(buckets.windows(2).all(|w| w[1] == w[0] || w[1] == w[0] + 1));
        assert!((2..=32).all(|men| output_bucket(men, 1) == 0));

        // Raising one bucket's bias moves the evaluations of its positions only.
        let net = small_with(8);
        let mut raised = net.clone();
        raised.output_biases[7] += 100 * QA * QB / SCALE;
        let start = Position::startpos();
        let ending = Position::from_fen("8/5k2/8/3p4/3P4/2B5/5K2/8 b - - 0 1").unwrap();
        assert!((raised.evaluate(&start) - net.evaluate(&start) - 100).abs() <= 1);
        assert_eq!(raised.evaluate(&ending), net.evaluate(&ending));
    }

    /// Every kernel's run-time choice (AVX-512, AVX2 or SSE4.1 where the processor has them)
    /// gives what the portable build gives, on random lanes and on the extremes, with lengths
    /// that are and are not multiples of the vector widths.
    #[test]
    fn the_dispatched_kernels_equal_the_portable_ones() {
        let mut rng = fastrand::Rng::with_seed(3);
        let limit = OUTPUT_LIMIT;
        for n in [1usize, 7, 16, 33, 256, 300, 512, 1024] {
            for round in 0..20 {
                let lanes = |rng: &mut fastrand::Rng, lo: i16, hi: i16| -> Vec<i16> {
                    (0..n)
                        .map(|_| match round % 3 {
                            0 => rng.i16(lo..=hi),
                            1 => [lo, hi, 0, -1, QA.min(hi as i32) as i16][rng.usize(..5)],
                            _ => rng.i16(-600..=600).clamp(lo, hi),
                        })
                        .collect()
                };
                let acc = lanes(&mut rng, i16::MIN, i16::MAX);
                let w = lanes(&mut rng, -limit, limit);
                assert_eq!(
                    kernels::screlu_dot(&acc, &w),
                    kernels::screlu_dot_portable(&acc, &w)
                );
                let exact: i64 = acc
                    .iter()
                    .zip(&w)
                    .map(|(&a, &w)| (a.clamp(0, QA as i16) as i64).pow(2) * w as i64)
                    .sum();
                assert_eq!(kernels::screlu_dot(&acc, &w), exact);

                let rows: Vec<Vec<i16>> = (0..4)
                    .map(|_| lanes(&mut rng, i16::MIN, i16::MAX))
                    .collect();
                let (mut fast, mut slow) = (vec![0i16; n], vec![0i16; n]);
                kernels::sub_add(&mut fast, &acc, &rows[0], &rows[1]);
                kernels::sub_add_portable(&mut slow, &acc, &rows[0], &rows[1]);
                assert_eq!(fast, slow);
                kernels::sub2_add(&mut fast, &acc, [&rows[0], &rows[1]], &rows[2]);
                kernels::sub2_add_portable(&mut slow, &acc, [&rows[0], &rows[1]], &rows[2]);
                assert_eq!(fast, slow);
                let (a, b) = ([&rows[0][..], &rows[1]], [&rows[2][..], &rows[3]]);
                kernels::sub2_add2(&mut fast, &acc, a, b);
                kernels::sub2_add2_portable(&mut slow, &acc, a, b);
                assert_eq!(fast, slow);
                kernels::add(&mut fast, &rows[3]);
                kernels::add_portable(&mut slow, &rows[3]);
                assert_eq!(fast, slow);
            }
        }
    }

    #[test]
    fn an_output_weight_beyond_the_limit_is_refused() {
        let mut net = small();
        net.output_weights[3] = OUTPUT_LIMIT + 1;
        assert_eq!(
            Network::from_bytes(&net.to_bytes()),
            Err(NetworkError::OutputWeight)
        );
    }

    /// The built-in network loads, and sees the starting position as about level.
    #[test]
    fn the_built_in_network_loads() {
        let net = Network::built_in();
        let v = net.evaluate(&Position::startpos());
        assert!(v.abs() < 100, "{v}");
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

    /// Updated move by move through random games (castling, en passant, promotions and
    /// captures among them), the accumulator equals one summed from scratch at every ply.
    #[test]
    fn the_accumulator_updated_move_by_move_equals_a_fresh_one() {
        let net = small();
        let mut rng = fastrand::Rng::with_seed(5);
        let mut kinds = [0usize; 4];
        for game in 0..200 {
            let mut pos = if game % 2 == 0 {
                Position::startpos()
            } else {
                Position::from_fen("r3k2r/1P4P1/8/2pP4/8/8/1p4p1/R3K2R w KQkq c6 0 1").unwrap()
            };
            let mut acc = Accumulator::new(net.hidden());
            net.refresh(&pos, &mut acc);
            for _ in 0..120 {
                let moves = crate::chess::legal_moves(&pos);
                if moves.is_empty() {
                    break;
                }
                let m = moves.as_slice()[rng.usize(..moves.len())];
                match m.kind() {
                    MoveKind::Castle => kinds[0] += 1,
                    MoveKind::EnPassant => kinds[1] += 1,
                    MoveKind::Promotion(_) => kinds[2] += 1,
                    _ if pos.piece_at(m.to()).is_some() => kinds[3] += 1,
                    _ => {}
                }
                let mut next = Accumulator::new(net.hidden());
                net.update(&acc, &mut next, &pos, m);
                pos.make_move(m);
                let mut fresh = Accumulator::new(net.hidden());
                net.refresh(&pos, &mut fresh);
                assert_eq!(next, fresh, "{}", pos.to_fen());
                assert_eq!(net.evaluate_accumulated(&next, &pos), net.evaluate(&pos));
                acc = next;
            }
        }
        assert!(
            kinds.iter().all(|&k| k > 0),
            "castles, en passant, promotions, captures: {kinds:?}"
        );
    }
}
