//! Attack sets of every man from every square: leapers from tables built at compile time,
//! sliders by "fancy" magic bitboards, plus the `between` and `line` tables used by pins.
//!
//! The magic multipliers below are our own: `tests::magics_come_from_the_seeded_search` finds
//! them again by a seeded random search. They are constants only to spare every start-up that
//! search (a quarter of a second); the tables are filled from them and checked as they are filled.
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

const BISHOP_MAGICS: [u64; 64] = [
    0x0004_2002_4200_2101,
    0x0004_0802_404E_0410,
    0x048C_5C20_8A00_8010,
    0x00C4_4400_8140_0000,
    0x0424_0504_14C0_0007,
    0x0112_0894_0400_D008,
    0x5000_8809_3012_000A,
    0x0004_2402_0804_8208,
    0x2010_8810_0182_0410,
    0x0005_020A_8C01_0A00,
    0x01A1_1001_4212_206C,
    0x0080_0808_4100_0000,
    0x0040_0110_4000_0404,
    0x4800_0090_0420_9048,
    0x0040_1104_2120_0900,
    0x0004_0080_8090_1001,
    0x0008_8051_2028_0080,
    0x0020_8008_0A14_0260,
    0x4C48_2130_0424_4010,
    0x9088_1044_0210_204A,
    0x0008_1021_0140_020C,
    0x0482_0804_1002_0800,
    0x0410_8030_4230_1001,
    0x8025_8000_4602_D002,
    0x0004_1010_0510_1060,
    0x0002_7080_0210_2A00,
    0x2182_0100_4204_040A,
    0x2004_0040_0401_0002,
    0x2001_4880_0401_2000,
    0x68B2_0480_0408_A000,
    0x0408_0489_4226_0100,
    0x4002_0202_1021_0100,
    0x008A_0820_0042_02C0,
    0x0808_4202_0010_4408,
    0x6002_0024_0802_080A,
    0x201A_4084_8048_0200,
    0x8210_0104_1002_0200,
    0x0014_3800_A002_0080,
    0x4010_0903_0400_4440,
    0x0501_2200_2120_8403,
    0x0051_0808_C600_4000,
    0x0001_00C8_040A_2012,
    0x0000_1084_1002_0104,
    0x0400_0042_0080_A801,
    0x0118_0404_0820_8400,
    0x0040_1004_1288_0040,
    0x0104_2408_2042_0201,
    0x9024_0092_0208_6040,
    0x4020_5108_8840_0210,
    0x0080_8058_0210_2000,
    0x4000_0202_0524_0000,
    0x0401_0002_1044_0000,
    0x0004_8040_0382_0404,
    0x2000_0820_0800_8400,
    0x0220_2001_8D01_0400,
    0x1808_4248_0202_2008,
    0x8106_0110_8804_0208,
    0x0400_1041_00B0_1002,
    0x0001_0000_4104_4100,
    0x0048_2000_0322_8800,
    0x0060_A008_0883_0408,
    0x000B_0440_4284_0108,
    0x0400_214A_1085_0300,
    0x0004_0102_0821_0301,
];

const ROOK_MAGICS: [u64; 64] = [
    0x0080_0020_8040_0011,
    0x8040_0020_0040_1000,
    0x0200_08C0_2290_8200,
    0x0200_0422_0040_0810,
    0x0200_2010_0408_0200,
    0x0E00_0810_0422_0051,
    0x8280_0100_0200_0080,
    0x4200_0022_0040_8411,
    0x8520_8004_9321_4000,
    0x0000_8020_0040_0084,
    0x0600_8010_0080_2000,
    0x0802_0040_1200_0820,
    0x0010_8008_0004_0280,
    0x0001_0002_0900_0400,
    0x6000_8080_0100_0200,
    0x0043_0021_0002_4492,
    0x4000_9280_0120_4000,
    0x0010_0040_0040_2004,
    0x0020_0040_4010_0800,
    0x1008_8180_3001_0800,
    0x4108_8080_0400_0800,
    0x8013_0100_0208_0400,
    0xA000_8400_0841_0210,
    0xA000_0A00_0108_844C,
    0x2042_8024_8000_C000,
    0x0000_2000_8040_0080,
    0x0000_8042_0010_2202,
    0x0000_1000_8080_0800,
    0x0012_0801_0004_1100,
    0x8090_0200_8080_0400,
    0x1A02_0002_0008_0401,
    0x0088_0042_0000_8401,
    0x0024_C009_6080_0180,
    0x8450_0040_0040_2010,
    0x2000_1000_8080_2000,
    0x0108_8010_0080_0802,
    0x0924_8008_0080_0400,
    0x0001_0004_0100_0802,
    0x0003_0004_0300_0200,
    0x0020_8008_4080_2900,
    0x02A0_2080_4000_8000,
    0x8400_A000_5001_4000,
    0x4001_0020_0041_0012,
    0x1012_0040_100A_0020,
    0x0010_0400_0800_8080,
    0x0000_0400_0200_8080,
    0x0000_0100_0200_8080,
    0x8060_0081_0042_0004,
    0x0A80_4000_8000_2080,
    0x2410_4229_0482_0200,
    0x004A_2001_0010_4100,
    0x0801_0020_1002_0900,
    0x0001_8018_0014_0280,
    0x0080_8002_0004_0080,
    0x8220_0218_1051_0400,
    0x0000_8000_4300_2C80,
    0x0000_4210_8002_2103,
    0x6080_4020_8200_1102,
    0x10C0_8901_5020_0143,
    0x0281_0004_0822_1001,
    0x0042_0008_0410_2002,
    0x0801_0008_0204_0001,
    0x4400_2220_A110_1804,
    0x0211_0000_4122_0C81,
];

/// Fills the attack table of each square for the given magics. A magic that maps two
/// occupancies with different attacks to one slot would be a wrong constant: that is refused.
fn fill_magics(
    dirs: &[(i8, i8); 4],
    magic_numbers: &[u64; 64],
    table: &mut Vec<u64>,
) -> [Magic; 64] {
    let mut magics = [Magic::default(); 64];
    for (sq, m) in magics.iter_mut().enumerate() {
        let mask = relevant_mask(sq, dirs);
        let bits = mask.count_ones();
        let offset = table.len();
        table.resize(offset + (1usize << bits), 0);
        *m = Magic {
            mask,
            magic: magic_numbers[sq],
            shift: 64 - bits,
            offset,
        };
        let mut filled = vec![false; 1usize << bits];
        // Carry-rippler enumeration of every subset of the mask.
        let mut subset = 0u64;
        loop {
            let attacks = ray_attacks(sq, subset, dirs);
            let i = m.index(subset);
            assert!(
                !filled[i - offset] || table[i] == attacks,
                "magic constant for square {} collides",
                sq
            );
            filled[i - offset] = true;
            table[i] = attacks;
            subset = subset.wrapping_sub(mask) & mask;
            if subset == 0 {
                break;
            }
        }
    }
    magics
}

fn build_tables() -> Tables {
    let mut table = Vec::with_capacity(102_400 + 5_248);
    let bishop = fill_magics(&BISHOP_DIRS, &BISHOP_MAGICS, &mut table);
    let rook = fill_magics(&ROOK_DIRS, &ROOK_MAGICS, &mut table);

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

    use fastrand::Rng;

    /// Candidate magics with few bits set, which are found far sooner than dense ones.
    fn sparse(rng: &mut Rng) -> u64 {
        rng.u64(..) & rng.u64(..) & rng.u64(..)
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
                m.magic = sparse(rng);
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

    #[test]
    fn magics_come_from_the_seeded_search() {
        let mut table = Vec::new();
        let mut rng = Rng::with_seed(0x9E37_79B9_7F4A_7C15);
        let bishop = find_magics(&BISHOP_DIRS, &mut table, &mut rng);
        let rook = find_magics(&ROOK_DIRS, &mut table, &mut rng);
        for sq in 0..64 {
            assert_eq!(bishop[sq].magic, BISHOP_MAGICS[sq], "bishop {}", sq);
            assert_eq!(rook[sq].magic, ROOK_MAGICS[sq], "rook {}", sq);
        }
    }

    #[test]
    fn magic_attacks_agree_with_ray_walking() {
        let mut rng = Rng::with_seed(12345);
        for _ in 0..2000 {
            let occ = rng.u64(..) & rng.u64(..);
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
