//! `engine train`: fits the network of `eval::network` to `datagen`'s records on the CPU.
//!
//! Each position's target blends the game's result and the search's score (both for the side
//! to move): `wdl × result + (1 - wdl) × sigmoid(score / 400)`; the loss is the squared distance
//! of `sigmoid(output)` from it (the output in units of `SCALE` centipawns). Adam, mini-batches
//! drawn in an order shuffled from the seed, the learning rate falling linearly to a tenth.
//! A batch is cut into `CHUNKS` fixed parts whose gradients are summed in order, so the result
//! depends on the seed, not on the number of threads. The last `validation` share of the
//! records (whole games, as datagen writes them in game order) is held out; its loss is printed
//! each epoch, for the float weights and for the integer network that is written.

use super::record::{Record, RECORD_BYTES};
use crate::chess::{Color, Square};
use crate::eval::network::{feature, output_bucket, Network, INPUTS, OUTPUT_LIMIT, QA, QB};
use rayon::prelude::*;
use std::path::PathBuf;

pub struct TrainArgs {
    pub data: Vec<PathBuf>,
    pub out: PathBuf,
    pub hidden: usize,
    /// Output buckets by the number of men (`eval::network::output_bucket`).
    pub buckets: usize,
    pub epochs: usize,
    pub batch: usize,
    pub rate: f32,
    /// The result's share of the target.
    pub wdl: f32,
    pub validation: f64,
    pub seed: u64,
    /// Whether each training position is also used mirrored left to right.
    pub mirror: bool,
}

/// Parts of a batch whose gradients are summed in a fixed order.
const CHUNKS: usize = 8;
/// The output weights' bound, so that their integer form fits `QB` scaled i16 arithmetic.
const OUTPUT_BOUND: f32 = OUTPUT_LIMIT as f32 / QB as f32;
/// The hidden weights' bound.
const HIDDEN_BOUND: f32 = 32_000.0 / QA as f32;

/// One position as the trainer sees it: the inputs of both sides, side to move's first.
struct Sample {
    features: [[u16; 32]; 2],
    count: u8,
    bucket: u8,
    target: f32,
}

impl Sample {
    /// Record `r`'s position, mirrored left to right if `mirror`.
    fn of(r: &Record, wdl: f32, mirror: bool, buckets: usize) -> Sample {
        let stm = r.side_to_move;
        let mut features = [[0u16; 32]; 2];
        let mut count = 0;
        for (sq, piece) in r.men() {
            let sq = if mirror { Square(sq.0 ^ 7) } else { sq };
            features[0][count] = feature(stm, piece, sq) as u16;
            features[1][count] = feature(!stm, piece, sq) as u16;
            count += 1;
        }
        let white = r.result.white_score();
        let (result, score) = match stm {
            Color::White => (white, r.score as f32),
            Color::Black => (1.0 - white, -(r.score as f32)),
        };
        Sample {
            features,
            count: count as u8,
            bucket: output_bucket(count, buckets) as u8,
            target: wdl * result + (1.0 - wdl) * sigmoid(score / 400.0),
        }
    }
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// The float parameters (and, in the same shape, gradients and Adam's moments).
#[derive(Clone)]
struct Params {
    hidden: usize,
    w1: Vec<f32>,
    b1: Vec<f32>,
    /// Bucket by bucket, 2 × hidden each.
    w2: Vec<f32>,
    /// One a bucket.
    b2: Vec<f32>,
}

impl Params {
    fn zeros(hidden: usize, buckets: usize) -> Params {
        Params {
            hidden,
            w1: vec![0.0; INPUTS * hidden],
            b1: vec![0.0; hidden],
            w2: vec![0.0; buckets * 2 * hidden],
            b2: vec![0.0; buckets],
        }
    }

    fn random(hidden: usize, buckets: usize, rng: &mut fastrand::Rng) -> Params {
        let mut p = Params::zeros(hidden, buckets);
        let r1 = 1.0 / (INPUTS as f32).sqrt();
        let r2 = 1.0 / (2.0 * hidden as f32).sqrt();
        p.w1.iter_mut()
            .for_each(|w| *w = (rng.f32() * 2.0 - 1.0) * r1);
        p.w2.iter_mut()
            .for_each(|w| *w = (rng.f32() * 2.0 - 1.0) * r2);
        p
    }

    fn clear(&mut self) {
        self.w1.fill(0.0);
        self.b1.fill(0.0);
        self.w2.fill(0.0);
        self.b2.fill(0.0);
    }

    /// The output for `s` (before the sigmoid); fills `acc` with both halves' hidden sums.
    fn forward(&self, s: &Sample, acc: &mut [f32]) -> f32 {
        let h = self.hidden;
        let bucket = s.bucket as usize;
        let w2 = &self.w2[bucket * 2 * h..(bucket + 1) * 2 * h];
        let mut out = self.b2[bucket];
        for half in 0..2 {
            let a = &mut acc[half * h..(half + 1) * h];
            a.copy_from_slice(&self.b1);
            for &f in &s.features[half][..s.count as usize] {
                let row = &self.w1[f as usize * h..(f as usize + 1) * h];
                a.iter_mut().zip(row).for_each(|(x, &w)| *x += w);
            }
            let w2 = &w2[half * h..(half + 1) * h];
            out += a
                .iter()
                .zip(w2)
                .map(|(&x, &w)| {
                    let c = x.clamp(0.0, 1.0);
                    c * c * w
                })
                .sum::<f32>();
        }
        out
    }

    /// Adds the gradient of `s`'s loss to `self` (as gradients); returns the loss. `scratch`
    /// holds 3 × hidden floats: both halves' hidden sums, then one half's gradient.
    fn backward(&mut self, net: &Params, s: &Sample, scratch: &mut [f32]) -> f32 {
        let h = self.hidden;
        let (acc, da) = scratch.split_at_mut(2 * h);
        let p = sigmoid(net.forward(s, acc));
        let d = 2.0 * (p - s.target) * p * (1.0 - p);
        let bucket = s.bucket as usize;
        self.b2[bucket] += d;
        let out = bucket * 2 * h;
        for half in 0..2 {
            let a = &acc[half * h..(half + 1) * h];
            let at = out + half * h..out + (half + 1) * h;
            let w2 = &net.w2[at.clone()];
            let g2 = &mut self.w2[at];
            for i in 0..h {
                let c = a[i].clamp(0.0, 1.0);
                g2[i] += d * c * c;
                // SCReLU's slope: 2x inside 0..1, flat outside.
                da[i] = if a[i] > 0.0 && a[i] < 1.0 {
                    d * w2[i] * 2.0 * a[i]
                } else {
                    0.0
                };
            }
            self.b1
                .iter_mut()
                .zip(da.iter())
                .for_each(|(b, &g)| *b += g);
            for &f in &s.features[half][..s.count as usize] {
                let row = &mut self.w1[f as usize * h..(f as usize + 1) * h];
                row.iter_mut().zip(da.iter()).for_each(|(w, &g)| *w += g);
            }
        }
        (p - s.target) * (p - s.target)
    }

    fn add(&mut self, o: &Params) {
        let add = |a: &mut [f32], b: &[f32]| a.iter_mut().zip(b).for_each(|(x, &y)| *x += y);
        add(&mut self.w1, &o.w1);
        add(&mut self.b1, &o.b1);
        add(&mut self.w2, &o.w2);
        add(&mut self.b2, &o.b2);
    }

    fn network(&self) -> Network {
        Network::quantise(self.hidden, &self.w1, &self.b1, &self.w2, &self.b2)
    }
}

/// Adam's state.
struct Adam {
    m: Params,
    v: Params,
    step: i32,
}

impl Adam {
    fn update(&mut self, p: &mut Params, g: &Params, rate: f32, n: f32) {
        const B1: f32 = 0.9;
        const B2: f32 = 0.999;
        self.step += 1;
        let (c1, c2) = (1.0 - B1.powi(self.step), 1.0 - B2.powi(self.step));
        let one = |w: &mut f32, g: f32, m: &mut f32, v: &mut f32, bound: f32| {
            let g = g / n;
            *m = B1 * *m + (1.0 - B1) * g;
            *v = B2 * *v + (1.0 - B2) * g * g;
            *w -= rate * (*m / c1) / ((*v / c2).sqrt() + 1e-8);
            *w = w.clamp(-bound, bound);
        };
        let (m, v) = (&mut self.m, &mut self.v);
        for (w, g, m, v, bound) in [
            (&mut p.w1, &g.w1, &mut m.w1, &mut v.w1, HIDDEN_BOUND),
            (&mut p.b1, &g.b1, &mut m.b1, &mut v.b1, HIDDEN_BOUND),
            (&mut p.w2, &g.w2, &mut m.w2, &mut v.w2, OUTPUT_BOUND),
            (&mut p.b2, &g.b2, &mut m.b2, &mut v.b2, f32::MAX),
        ] {
            for i in 0..w.len() {
                one(&mut w[i], g[i], &mut m[i], &mut v[i], bound);
            }
        }
    }
}

/// What one epoch ended with.
pub struct EpochReport {
    pub epoch: usize,
    pub train_loss: f64,
    pub validation_loss: f64,
    /// The held-out loss of the integer network.
    pub quantised_loss: f64,
}

/// Reads the records of `args.data`, trains, writes the network to `args.out` after each epoch;
/// `on_epoch` hears each epoch's losses.
pub fn run(args: &TrainArgs, on_epoch: &mut dyn FnMut(&EpochReport)) -> Result<Network, String> {
    let mut records = Vec::new();
    for path in &args.data {
        records.extend(super::datagen::read_records(path)?);
    }
    let held = ((records.len() as f64 * args.validation) as usize).min(records.len());
    let (train, valid) = records.split_at(records.len() - held);
    if train.is_empty() || valid.is_empty() {
        return Err(format!(
            "{} records: too few for a training set and a held-out set",
            records.len()
        ));
    }
    let mirrors: &[bool] = if args.mirror {
        &[false, true]
    } else {
        &[false]
    };
    let samples: Vec<Sample> = train
        .iter()
        .flat_map(|r| {
            mirrors
                .iter()
                .map(|&m| Sample::of(r, args.wdl, m, args.buckets))
        })
        .collect();
    let held_out: Vec<Sample> = valid
        .iter()
        .map(|r| Sample::of(r, args.wdl, false, args.buckets))
        .collect();
    let positions: Vec<_> = valid
        .iter()
        .map(|r| r.position().map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    eprintln!(
        "train: {} positions, {} held out ({} bytes of records), hidden {}, {} output buckets, batch {}, {} epochs",
        samples.len(),
        held_out.len(),
        records.len() * RECORD_BYTES,
        args.hidden,
        args.buckets,
        args.batch,
        args.epochs
    );
    let loss_of = |evaluate: &(dyn Fn(&crate::chess::Position) -> i32 + Sync)| {
        held_out
            .par_iter()
            .zip(&positions)
            .map(|(s, pos)| {
                let p = sigmoid(evaluate(pos) as f32 / 400.0);
                ((p - s.target) * (p - s.target)) as f64
            })
            .sum::<f64>()
            / held_out.len() as f64
    };
    // The bar a network must pass, on the same positions: the built-in network (data made by it
    // should train a better one).
    let built_in = Network::built_in();
    let built_in_loss = loss_of(&|pos| built_in.evaluate(pos));
    eprintln!("train: held-out loss of the built-in network {built_in_loss:.6}");
    let mut rng = fastrand::Rng::with_seed(args.seed);
    let (h, buckets) = (args.hidden, args.buckets);
    let mut params = Params::random(h, buckets, &mut rng);
    let mut adam = Adam {
        m: Params::zeros(h, buckets),
        v: Params::zeros(h, buckets),
        step: 0,
    };
    let mut grads: Vec<(Params, Vec<f32>, f64)> = (0..CHUNKS)
        .map(|_| (Params::zeros(h, buckets), vec![0.0; 3 * h], 0.0))
        .collect();
    let mut order: Vec<u32> = (0..samples.len() as u32).collect();
    let batches = samples.len().div_ceil(args.batch);
    let total_steps = (args.epochs * batches) as f32;
    let mut net = params.network();
    for epoch in 1..=args.epochs {
        rng.shuffle(&mut order);
        let mut loss = 0.0;
        for (b, batch) in order.chunks(args.batch).enumerate() {
            let per = batch.len().div_ceil(CHUNKS);
            grads
                .par_iter_mut()
                .enumerate()
                .for_each(|(c, (g, acc, l))| {
                    g.clear();
                    *l = 0.0;
                    for &i in batch.iter().skip(c * per).take(per) {
                        *l += g.backward(&params, &samples[i as usize], acc) as f64;
                    }
                });
            let (first, rest) = grads.split_at_mut(1);
            for (g, _, l) in rest.iter() {
                first[0].0.add(g);
                first[0].2 += l;
            }
            loss += first[0].2;
            let step = ((epoch - 1) * batches + b) as f32;
            let rate = args.rate * (1.0 - 0.9 * step / total_steps);
            adam.update(&mut params, &first[0].0, rate, batch.len() as f32);
        }
        net = params.network();
        let validation_loss = held_out
            .par_iter()
            .map_init(
                || vec![0.0; 2 * args.hidden],
                |acc, s| {
                    let p = sigmoid(params.forward(s, acc));
                    ((p - s.target) * (p - s.target)) as f64
                },
            )
            .sum::<f64>()
            / held_out.len() as f64;
        let quantised_loss = loss_of(&|pos| net.evaluate(pos));
        write_atomically(&args.out, &net.to_bytes())?;
        on_epoch(&EpochReport {
            epoch,
            train_loss: loss / samples.len() as f64,
            validation_loss,
            quantised_loss,
        });
    }
    Ok(net)
}

fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> Result<(), String> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, bytes)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| format!("{}: {e}", path.display()))
}
