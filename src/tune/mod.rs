//! Tuning the evaluation's weights by Texel's method: `datagen` plays the engine against itself
//! and labels quiet positions with the game result;
//! `texel` fits the evaluation's weights to those results.

pub mod datagen;
pub mod texel;
