//! Endgame tables: material signatures, the Nalimov index (Nalimov, Haworth, Heinz 2001,
//! Section 3), the table file format (Bourzutschky, Tamplin, Haworth 2005, Section 6) and the
//! `tbinfo` report. The retrograde generator and the probe build on these:
//!
//! * generator: `Material::sub_endgames` for the order of work; `EndgameIndex::new`, `size`,
//!   `stored_halves` and `decode(half, i)` over whole ranges (allocation-free, `Sync`, so rayon
//!   may split the range); `index` for the positions reached by a move; `file::write_table`.
//! * probe: `Material` of the board, `EndgameIndex::index(&TbPosition)` (colour flip, symmetry
//!   and e.p. zone handled inside) and `file::TableFile::value(half, i)`.

pub mod file;
pub mod index;
pub mod info;
pub mod material;

pub use index::{EndgameIndex, Half, Symmetry, TbPosition};
pub use material::{Material, MaterialError};
