//! Endgame tables, one folder a concept, with the material signature (`material`) that every
//! one of them speaks of:
//!
//! * `index`: Nalimov's index scheme (Nalimov, Haworth, Heinz 2001, Section 3): position <->
//!   index, sizes, broken entries.
//! * `format`: the files (Bourzutschky, Tamplin, Haworth 2005, Section 6): values, header,
//!   blocks and their compression, reading through the block cache, atomic writing, staging.
//! * `play`: what the engine asks: one endgame's tables opened together (`play::tables`, with
//!   what the files leave out worked out by one ply), the registry and probe, the root strategy
//!   SZ°Z50⁻Z⁻, Syzygy's files.
//! * `generate`: `engine gentb`, the retrograde solvers, verification and summaries.
//! * `background`: the worker that builds missing tables during a game.
//! * `report`: `tbinfo`, the comparison with the papers' tables, DTZ statistics.
//!
//! The wings depend downhill only: `index` and `format` on nothing here but `material`;
//! `play` on those two; `generate` and `report` on `play` (sub-tables, the probe's positions);
//! `background` on `generate` and `play`.

pub mod background;
pub mod format;
pub mod generate;
pub mod index;
pub mod material;
pub mod play;
pub mod report;

pub use format::{cache_bytes, set_cache_bytes};
pub use index::{EndgameIndex, Half, Symmetry, TbPosition};
pub use material::{Material, MaterialError};
pub use play::probe::{Tablebases, TbProbe, TbReader, Wdl};
pub use play::tables::EndgameTables;
