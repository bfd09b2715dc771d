//! Endgame tables: material signatures, the Nalimov index (Nalimov, Haworth, Heinz 2001,
//! Section 3), the table file format, the `tbinfo` report, the retrograde generator
//! (`generate`, `engine gentb`) and the three tables of an endgame opened together (`tables`).

pub mod file;
pub mod generate;
pub mod index;
pub mod info;
pub mod material;
pub mod tables;

pub use index::{EndgameIndex, Half, Symmetry, TbPosition};
pub use material::{Material, MaterialError};
pub use tables::EndgameTables;
