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
    0x1010_2002_004A_1420,
    0x8020_0404_0058_4008,
    0x1051_0800_8112_01C8,
    0x5204_0420_8000_0088,
    0x2204_1068_8000_0002,
    0x1401_0420_0400_0000,
    0x0400_8804_1004_2004,
    0x0028_2082_00A0_2020,
    0x1500_2419_9001_0E00,
    0x8001_2001_8202_0A40,
    0x4000_4101_030B_0000,
    0x8002_0410_4200_0100,
    0x4010_0110_4102_0038,
    0x0000_0104_2104_4000,
    0x1500_2108_0802_0A00,
    0x8000_0884_0088_0520,
    0x0405_0040_1004_0100,
    0x1005_8232_1004_0108,
    0x2708_0081_0204_0011,
    0x4048_2004_0400_9100,
    0x0018_1041_0140_0024,
    0x0003_0006_0119_0101,
    0x8004_8031_0849_1000,
    0x8014_2412_0082_0800,
    0x0006_E080_100C_3040,
    0x0501_044A_1104_1800,
    0x9020_3000_0800_4045,
    0x0894_0800_0022_0040,
    0x1001_0100_8310_4000,
    0x5004_0300_4090_0080,
    0x0004_0042_2C01_2400,
    0x0002_1286_9840_4812,
    0x1010_1084_0490_0440,
    0x0928_0211_8208_4100,
    0x2006_0804_0902_0024,
    0x1010_2020_2018_0080,
    0xA010_0082_0020_2200,
    0x2098_0151_0001_9004,
    0x0002_0414_4081_0811,
    0x802A_0202_0000_B098,
    0x0009_0150_9000_4060,
    0x4000_8210_8208_1001,
    0x0100_2100_4042_0800,
    0x0800_0040_1048_8A00,
    0x2000_0811_0400_4040,
    0x4C8E_0290_1500_0082,
    0x0420_3403_2222_4842,
    0x1298_2600_4340_0210,
    0x0000_8228_0240_0008,
    0x0000_8A01_0160_0000,
    0x3040_0034_1208_0021,
    0x3040_2902_2088_4800,
    0x4A15_0040_1041_004A,
    0x8010_2002_8202_0781,
    0x0020_2031_4220_9091,
    0x0070_3006_0090_2110,
    0x0040_8088_00B6_2048,
    0x0000_8104_00C4_4420,
    0x0008_0400_440C_0441,
    0x8340_0800_2084_0411,
    0x0000_0001_0420_8200,
    0x0000_8008_10D0_0080,
    0x0400_5304_1108_0200,
    0x4040_7024_0093_2244,
];

const ROOK_MAGICS: [u64; 64] = [
    0x1080_0040_0880_1020,
    0x0840_0920_02C0_3000,
    0x1900_2000_1040_0900,
    0x0880_1000_0800_0480,
    0x4200_1004_2008_0200,
    0x8100_0201_0008_0400,
    0x0200_0401_1088_6200,
    0x0200_0080_4022_0411,
    0x0404_8000_8440_0220,
    0x0000_4010_0040_2000,
    0x0086_0010_8122_0440,
    0x0408_8008_0010_0280,
    0x000A_0012_0104_0820,
    0x8848_8002_0084_0080,
    0x4001_0001_0004_0200,
    0x0442_0001_0210_5084,
    0x9080_0100_2080_4100,
    0x0040_4040_0020_1009,
    0x0000_8080_1000_2009,
    0x2200_0900_21D0_0100,
    0x0008_0080_0804_0080,
    0x0004_0040_0201_0040,
    0x0011_0400_0801_5042,
    0x0000_0A00_0176_8104,
    0x0000_8000_8020_4009,
    0x2010_0041_4000_2001,
    0x9800_2002_8010_0080,
    0x1000_1000_8008_0080,
    0x0442_000A_0004_9020,
    0x2100_0400_8002_0080,
    0x0800_1204_0090_0148,
    0x0010_040A_0012_8541,
    0x2800_8040_0080_0030,
    0x1010_0020_0040_0041,
    0x4000_2000_1100_4100,
    0x0610_0084_1080_0800,
    0x0400_8024_0280_0800,
    0xC100_0200_8080_0400,
    0x0002_0008_0200_0401,
    0x0182_0858_8200_0401,
    0x0220_2040_0080_8000,
    0x2860_1000_4002_4022,
    0x0001_0020_0411_0040,
    0x9910_1042_000A_0020,
    0x0004_0800_0400_8080,
    0x0010_0400_0200_8080,
    0x2012_0048_8102_0004,
    0x8300_8424_4482_0011,
    0x0088_4038_8201_0200,
    0x0820_4000_8021_0100,
    0x0110_9100_40A0_0300,
    0x0801_1002_8008_0480,
    0x0242_0090_0820_0600,
    0x1002_0004_8950_0200,
    0x0040_8002_0001_0080,
    0x0091_8000_4100_0080,
    0x0000_2093_0048_8001,
    0x04C1_0024_1482_4001,
    0x0200_2000_0B00_1041,
    0x7000_1000_0420_0901,
    0x8002_0020_0410_0802,
    0x3001_0002_084C_0007,
    0x0888_2218_0081_3004,
    0x4000_0028_4084_0112,
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

    #[test]
    fn magics_come_from_the_seeded_search() {
        let mut table = Vec::new();
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let bishop = find_magics(&BISHOP_DIRS, &mut table, &mut rng);
        let rook = find_magics(&ROOK_DIRS, &mut table, &mut rng);
        for sq in 0..64 {
            assert_eq!(bishop[sq].magic, BISHOP_MAGICS[sq], "bishop {}", sq);
            assert_eq!(rook[sq].magic, ROOK_MAGICS[sq], "rook {}", sq);
        }
    }

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
