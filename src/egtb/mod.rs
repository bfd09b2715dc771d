//! Endgame tables: material signatures, the Nalimov index (Nalimov, Haworth, Heinz 2001,
//! Section 3), the table file format (Bourzutschky, Tamplin, Haworth 2005, Section 6), the
//! `tbinfo` report, the retrograde generator (`generate`, `engine gentb`) and the three tables of
//! an endgame opened together (`tables`, what the probe reads):
//!
//! * generator: `Material::sub_endgames` for the order of work; `EndgameIndex::new`, `size`,
//!   `stored_halves` and `decode(half, i)` over whole ranges (allocation-free, `Sync`, so rayon
//!   may split the range); `index` for the positions reached by a move; `file::write_table`.
//! * probe: `EndgameTables::open(dir, &material)` and `probe(&TbPosition)` for DTM, DTZ and
//!   DTZ50 at once; underneath, `EndgameIndex::index(&TbPosition)` (colour flip, symmetry and
//!   e.p. zone handled inside) and `file::TableFile::value(half, i)`; `TbValue::outcome` decodes.
//! * in play: the registry and probe (`probe`), the root strategy SZ°Z50⁻Z⁻ (`strategy`), the
//!   background generator (`background`), both building through `staging`.
//! * DTZ and DTZ50 of a side to move the files leave out: by one ply (`one_ply`), in the
//!   generator's own arithmetic of values in plies (`plies`).
//! * against the literature: what the 50-move rule does to an endgame (`dtz_stats`) and the
//!   six-man figures of Bourzutschky, Tamplin, Haworth (2005) beside ours (`paper`).

pub mod background;
mod blockcache;
pub mod dtz_stats;
pub mod file;
pub mod generate;
pub mod index;
pub mod info;
pub mod material;
pub mod one_ply;
pub mod paper;
pub mod plies;
pub mod probe;
pub mod recompress;
pub mod staging;
pub mod strategy;
pub mod syzygy;
pub mod tables;

pub use blockcache::{cache_bytes, set_cache_bytes};
pub use index::{EndgameIndex, Half, Symmetry, TbPosition};
pub use material::{Material, MaterialError};
pub use probe::{Tablebases, TbProbe, TbReader, Wdl};
pub use tables::EndgameTables;
