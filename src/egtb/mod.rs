//! Endgame tables: material signatures, the Nalimov index (Nalimov, Haworth, Heinz 2001,
//! Section 3), the table file format and the `tbinfo` report. The retrograde generator and the
//! probe build on these.

pub mod file;
pub mod index;
pub mod info;
pub mod material;

pub use index::{EndgameIndex, Half, Symmetry, TbPosition};
pub use material::{Material, MaterialError};
