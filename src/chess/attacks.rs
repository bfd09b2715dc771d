//! Attack sets of every man from every square: leapers from tables built at compile time,
//! sliders by "fancy" magic bitboards whose magics are found once at start-up by a seeded search
//! (so no constant is copied from anywhere), plus the `between` and `line` tables used by pins.
//!
//! The endgame-table index and generator use these same tables; there is one copy of the rules.

use super::bitboard::Bitboard;
use super::types::{Color, PieceType, Square};
use once_cell::sync::Lazy;

const fn leaper_table(deltas: &[(i8, i8)]) -> [u64; 64] {
    let mut table = [0u64; 64];
    let mut sq = 0;
    while sq < 64 {
        let (f, r) = ((sq % 8) as i8, (sq / 8) as i8);
        let mut i = 0;
        while i < deltas.len() {
            let (nf, nr) = (f + deltas[i].0, r + deltas[i].1);
            if nf >= 0 && nf < 8 && nr >= 0 && nr < 8 {
                table[sq] |= 1u64 << (nr * 8 + nf);
            }
            i += 1;
        }
        sq += 1;
    }
    table
}

static KING: [u64; 64] = leaper_table(&[
    (-1, -1),
    (0, -1),
    (1, -1),
    (-1, 0),
    (1, 0),
    (-1, 1),
    (0, 1),
    (1, 1),
]);
static KNIGHT: [u64; 64] = leaper_table(&[
    (1, 2),
    (2, 1),
    (2, -1),
    (1, -2),
    (-1, -2),
    (-2, -1),
    (-2, 1),
    (-1, 2),
]);
static PAWN: [[u64; 64]; 2] = [
    leaper_table(&[(-1, 1), (1, 1)]),
    leaper_table(&[(-1, -1), (1, -1)]),
];

#[inline(always)]
pub fn king_attacks(sq: Square) -> Bitboard {
    Bitboard(KING[sq.index()])
}

#[inline(always)]
pub fn knight_attacks(sq: Square) -> Bitboard {
    Bitboard(KNIGHT[sq.index()])
}

/// The squares a pawn of `color` on `sq` attacks.
#[inline(always)]
pub fn pawn_attacks(color: Color, sq: Square) -> Bitboard {
    Bitboard(PAWN[color.index()][sq.index()])
}

#[inline(always)]
pub fn bishop_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    let t = &*TABLES;
    Bitboard(t.table[t.bishop[sq.index()].index(occupied.0)])
}

#[inline(always)]
pub fn rook_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    let t = &*TABLES;
    Bitboard(t.table[t.rook[sq.index()].index(occupied.0)])
}

#[inline(always)]
pub fn queen_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    bishop_attacks(sq, occupied) | rook_attacks(sq, occupied)
}

/// Attacks of a non-pawn man of type `kind` on `sq`.
#[inline(always)]
pub fn piece_attacks(kind: PieceType, sq: Square, occupied: Bitboard) -> Bitboard {
    match kind {
        PieceType::Knight => knight_attacks(sq),
        PieceType::Bishop => bishop_attacks(sq, occupied),
        PieceType::Rook => rook_attacks(sq, occupied),
        PieceType::Queen => queen_attacks(sq, occupied),
        PieceType::King => king_attacks(sq),
        PieceType::Pawn => panic!("piece_attacks needs a colour for pawns"),
    }
}

/// Squares strictly between `a` and `b` when they share a rank, file or diagonal; else empty.
#[inline(always)]
pub fn between(a: Square, b: Square) -> Bitboard {
    Bitboard(TABLES.between[a.index()][b.index()])
}

/// The whole line (edge to edge) through `a` and `b` when they are aligned; else empty.
#[inline(always)]
pub fn line(a: Square, b: Square) -> Bitboard {
    Bitboard(TABLES.line[a.index()][b.index()])
}

#[derive(Default, Clone, Copy)]
struct Magic {
    mask: u64,
    magic: u64,
    shift: u32,
    offset: usize,
}

impl Magic {
    #[inline(always)]
    fn index(&self, occupied: u64) -> usize {
        self.offset + ((occupied & self.mask).wrapping_mul(self.magic) >> self.shift) as usize
    }
}

struct Tables {
    bishop: [Magic; 64],
    rook: [Magic; 64],
    table: Vec<u64>,
    between: Box<[[u64; 64]; 64]>,
    line: Box<[[u64; 64]; 64]>,
}

static TABLES: Lazy<Tables> = Lazy::new(build_tables);

const ROOK_DIRS: [(i8, i8); 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)];
const BISHOP_DIRS: [(i8, i8); 4] = [(1, 1), (1, -1), (-1, 1), (-1, -1)];

/// Slider attacks by walking rays: slow, used only to fill the tables.
fn ray_attacks(sq: usize, occupied: u64, dirs: &[(i8, i8); 4]) -> u64 {
    let mut attacks = 0;
    for &(df, dr) in dirs {
        let (mut f, mut r) = ((sq % 8) as i8, (sq / 8) as i8);
        loop {
            f += df;
            r += dr;
            if !(0..8).contains(&f) || !(0..8).contains(&r) {
                break;
            }
            let bit = 1u64 << (r * 8 + f);
            attacks |= bit;
            if occupied & bit != 0 {
                break;
            }
        }
    }
    attacks
}

/// The relevant occupancy: the rays without the board's edge squares at their ends.
fn relevant_mask(sq: usize, dirs: &[(i8, i8); 4]) -> u64 {
    let mut mask = 0;
    for &(df, dr) in dirs {
        let (mut f, mut r) = ((sq % 8) as i8, (sq / 8) as i8);
        loop {
            let (nf, nr) = (f + df, r + dr);
            if !(0..8).contains(&nf) || !(0..8).contains(&nr) {
                break;
            }
            // The last square of a ray never blocks anything beyond it.
            let (nnf, nnr) = (nf + df, nr + dr);
            if !(0..8).contains(&nnf) || !(0..8).contains(&nnr) {
                break;
            }
            mask |= 1u64 << (nr * 8 + nf);
            f = nf;
            r = nr;
        }
    }
    mask
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn sparse(&mut self) -> u64 {
        self.next() & self.next() & self.next()
    }
}

fn find_magics(dirs: &[(i8, i8); 4], table: &mut Vec<u64>, rng: &mut Rng) -> [Magic; 64] {
    let mut magics = [Magic::default(); 64];
    let mut occupancies = Vec::with_capacity(4096);
    let mut references = Vec::with_capacity(4096);
    let mut epoch = vec![0u32; 4096];
    let mut attempt = 0u32;
    for (sq, m) in magics.iter_mut().enumerate() {
        let mask = relevant_mask(sq, dirs);
        let bits = mask.count_ones();
        occupancies.clear();
        references.clear();
        // Carry-rippler enumeration of every subset of the mask.
        let mut subset = 0u64;
        loop {
            occupancies.push(subset);
            references.push(ray_attacks(sq, subset, dirs));
            subset = subset.wrapping_sub(mask) & mask;
            if subset == 0 {
                break;
            }
        }
        let size = 1usize << bits;
        let offset = table.len();
        table.resize(offset + size, 0);
        *m = Magic {
            mask,
            magic: 0,
            shift: 64 - bits,
            offset,
        };
        'search: loop {
            m.magic = rng.sparse();
            if (mask.wrapping_mul(m.magic) >> 56).count_ones() < 6 {
                continue;
            }
            attempt += 1;
            for (occ, &reference) in occupancies.iter().zip(&references) {
                let i = ((occ.wrapping_mul(m.magic)) >> m.shift) as usize;
                if epoch[i] < attempt {
                    epoch[i] = attempt;
                    table[offset + i] = reference;
                } else if table[offset + i] != reference {
                    continue 'search;
                }
            }
            break;
        }
    }
    magics
}

fn build_tables() -> Tables {
    let mut table = Vec::with_capacity(102_400 + 5_248);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let bishop = find_magics(&BISHOP_DIRS, &mut table, &mut rng);
    let rook = find_magics(&ROOK_DIRS, &mut table, &mut rng);

    let mut between = Box::new([[0u64; 64]; 64]);
    let mut line = Box::new([[0u64; 64]; 64]);
    for a in 0..64 {
        for (dirs, empty_attacks) in [
            (&BISHOP_DIRS, ray_attacks(a, 0, &BISHOP_DIRS)),
            (&ROOK_DIRS, ray_attacks(a, 0, &ROOK_DIRS)),
        ] {
            for b in 0..64 {
                if empty_attacks >> b & 1 == 0 {
                    continue;
                }
                let from_a = ray_attacks(a, 1u64 << b, dirs);
                let from_b = ray_attacks(b, 1u64 << a, dirs);
                between[a][b] = from_a & from_b;
                line[a][b] = (empty_attacks & ray_attacks(b, 0, dirs)) | (1u64 << a) | (1u64 << b);
            }
        }
    }
    Tables {
        bishop,
        rook,
        table,
        between,
        line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_attacks_agree_with_ray_walking() {
        let mut rng = Rng(12345);
        for _ in 0..2000 {
            let occ = rng.next() & rng.next();
            for sq in 0..64 {
                assert_eq!(
                    rook_attacks(Square(sq as u8), Bitboard(occ)).0,
                    ray_attacks(sq, occ, &ROOK_DIRS)
                );
                assert_eq!(
                    bishop_attacks(Square(sq as u8), Bitboard(occ)).0,
                    ray_attacks(sq, occ, &BISHOP_DIRS)
                );
            }
        }
    }

    #[test]
    fn leapers_and_lines() {
        assert_eq!(king_attacks(Square::A1).count(), 3);
        assert_eq!(knight_attacks(Square(27)).count(), 8);
        assert_eq!(pawn_attacks(Color::White, Square(8)).0, 1 << 17);
        assert_eq!(pawn_attacks(Color::Black, Square(15)).0, 1 << 6);
        assert_eq!(between(Square::A1, Square::H8).count(), 6);
        assert_eq!(line(Square(9), Square(18)).count(), 8);
        assert!(between(Square::A1, Square(17)).is_empty());
    }
}
