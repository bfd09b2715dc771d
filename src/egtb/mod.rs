//! Endgame tables: material signatures, the Nalimov index (Nalimov, Haworth, Heinz 2001,
//! Section 3), the table file format, the `tbinfo` report, the retrograde generator
//! (`generate`, `engine gentb`), the three tables of an endgame opened together (`tables`), the
//! registry and probe used in play (`probe`), the root strategy SZ°Z50⁻Z⁻ (`strategy`), the
//! background generator (`background`) and `engine probe` (`probe_cli`).

pub mod background;
pub mod file;
pub mod generate;
pub mod index;
pub mod info;
pub mod material;
pub mod probe;
pub mod probe_cli;
pub mod strategy;
pub mod tables;

pub use index::{EndgameIndex, Half, Symmetry, TbPosition};
pub use material::{Material, MaterialError};
pub use probe::{Tablebases, TbProbe, TbReader, Wdl};
pub use tables::EndgameTables;
