//! Tables in play: what the engine asks of them. `tables` opens one endgame's files together and
//! answers every side to move (by one ply where the files keep one); `probe` holds the registry
//! of open endgames that the search threads read lock-free; `strategy` chooses a root move by
//! SZ°Z50⁻Z⁻ (Bourzutschky, Tamplin, Haworth 2005) with the game's half-move clock; `syzygy`
//! probes Syzygy's files, each checked against its own checksum before it is taken.

pub mod probe;
pub mod strategy;
pub mod syzygy;
pub mod tables;
