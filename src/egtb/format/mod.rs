//! Table files: one self-identifying file per endgame and metric (as Bourzutschky, Tamplin and
//! Haworth 2005, Section 6, recommend), values in 8 KiB blocks behind a block table, each block
//! stored raw or compressed alone (zstd; LZ4 in files of format 1) and read through the
//! per-thread block cache (`blockcache`; Nalimov et al. 2001, Section 3.6). Two choices make the
//! files small (measured in `docs/benchmarks.md`): broken entries hold the value before them
//! instead of a mark (the index knows which entries are broken), and a DTZ50 file holds only its
//! differences from the DTZ file (BTH 2005, Table 2: DTZ50 differs from DTZ in a fraction of a
//! percent of the positions). The exact byte layout is documented in `tables/README.md`.
//!
//! Files are written to a temporary name in the same directory, synced, then renamed (and the
//! directory synced), so a crash never leaves a file that looks complete. Readers map the file
//! with `memmap2` and check the header and the payload's xxh3-64 checksum on open.
//!
//! `value` holds the values, `header` a file's header, `block` one block's coding, `write` and
//! `read` the two directions, `blockcache` the cache the reader goes through, `staging` the
//! directory a build writes in, `plies` the arithmetic of values in plies.

mod block;
mod blockcache;
mod header;
pub mod plies;
mod read;
pub mod staging;
mod value;
mod write;

pub use blockcache::{cache_bytes, set_cache_bytes};
pub use header::*;
pub use read::TableFile;
pub use value::*;
pub use write::*;
