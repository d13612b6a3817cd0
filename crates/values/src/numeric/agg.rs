//! Aggregate state for sum, avg and the variance / stddev family.
//!
//! Summing millions of rows must not allocate per row, so finite inline
//! inputs accumulate into an i128 at the largest scale seen, spilling into
//! an exact digit sum only when the i128 would overflow. The final
//! functions reproduce numeric_sum, numeric_avg and numeric_stddev_internal
//! (result scales included); states combine for parallel aggregation.

use super::arith::select_div_scale;
use super::repr::{Numeric, Repr};
use super::transcendental::sqrt_var;
use super::var::Var;
use crate::SqlError;

/// An exact running sum of scaled values.
#[derive(Clone, Debug, Default)]
struct Acc {
    /// Largest display scale added so far (the result's scale).
    scale: i32,
    /// Sum of the fast-path terms, as a coefficient at `scale`.
    fast: i128,
    /// Sum of everything that did not fit `fast`.
    big: Option<Box<Var>>,
}

impl Acc {
    /// Adds `coef * 10^-dscale`.
    fn add_scaled(&mut self, coef: i128, dscale: i32) {
        self.raise_scale(dscale);
        let term = 10i128.checked_pow((self.scale - dscale) as u32).and_then(|p| coef.checked_mul(p));
        if let Some(sum) = term.and_then(|t| self.fast.checked_add(t)) {
            self.fast = sum;
            return;
        }
        self.add_var(&Var::from_scaled(coef, dscale));
    }

    /// Makes the scale at least `dscale`, keeping `fast`'s value.
    fn raise_scale(&mut self, dscale: i32) {
        if dscale > self.scale {
            let rescaled =
                10i128.checked_pow((dscale - self.scale) as u32).and_then(|p| self.fast.checked_mul(p));
            match rescaled {
                Some(f) => self.fast = f,
                None => self.spill(),
            }
            self.scale = dscale;
        }
    }

    /// Adds an arbitrary finite value exactly.
    fn add_var(&mut self, v: &Var) {
        self.raise_scale(v.dscale);
        let total = match self.big.take() {
            Some(b) => Var::add(&b, v),
            None => v.clone(),
        };
        self.big = Some(Box::new(total));
    }

    /// Moves the i128 part into the exact part.
    fn spill(&mut self) {
        if self.fast != 0 {
            let f = Var::from_scaled(self.fast, self.scale);
            self.fast = 0;
            let total = match self.big.take() {
                Some(b) => Var::add(&b, &f),
                None => f,
            };
            self.big = Some(Box::new(total));
        }
    }

    fn combine(&mut self, other: &Acc) {
        self.add_scaled(other.fast, other.scale);
        if let Some(b) = &other.big {
            self.add_var(b);
        }
    }

    /// The exact total with the largest input scale.
    fn total(&self) -> Var {
        let mut t = Var::from_scaled(self.fast, self.scale);
        if let Some(b) = &self.big {
            t = Var::add(&t, b);
        }
        t.dscale = self.scale;
        t
    }
}

/// State of `sum(numeric)` / `avg(numeric)` (and of sum/avg over integer
/// inputs, which PostgreSQL also finishes as numeric).
#[derive(Clone, Debug, Default)]
pub struct NumericSum {
    /// Finite inputs.
    n: i64,
    nan: i64,
    pinf: i64,
    ninf: i64,
    sum: Acc,
}

impl NumericSum {
    /// An empty state (no rows).
    pub fn new() -> NumericSum {
        NumericSum::default()
    }

    /// Accumulates one non-null input.
    pub fn add(&mut self, x: &Numeric) {
        match &x.0 {
            Repr::NaN => self.nan += 1,
            Repr::PosInf => self.pinf += 1,
            Repr::NegInf => self.ninf += 1,
            Repr::Small { coef, dscale } => {
                self.n += 1;
                self.sum.add_scaled(i128::from(*coef), i32::from(*dscale));
            }
            Repr::Big(v) => {
                self.n += 1;
                self.sum.add_var(v);
            }
        }
    }

    /// Accumulates one integer input (sum/avg of bigint, integer, smallint).
    pub fn add_i64(&mut self, x: i64) {
        self.n += 1;
        self.sum.add_scaled(i128::from(x), 0);
    }

    /// Merges another partial state into this one.
    pub fn combine(&mut self, other: &NumericSum) {
        self.n += other.n;
        self.nan += other.nan;
        self.pinf += other.pinf;
        self.ninf += other.ninf;
        self.sum.combine(&other.sum);
    }

    /// Non-null inputs seen, NaN and infinities included.
    pub fn count(&self) -> i64 {
        self.n + self.nan + self.pinf + self.ninf
    }

    /// The special result NaN / infinity inputs force, if any.
    fn special(&self) -> Option<Numeric> {
        if self.nan > 0 || (self.pinf > 0 && self.ninf > 0) {
            Some(Numeric::NAN)
        } else if self.pinf > 0 {
            Some(Numeric::INFINITY)
        } else if self.ninf > 0 {
            Some(Numeric::NEG_INFINITY)
        } else {
            None
        }
    }

    /// numeric_sum: `None` (SQL NULL) without inputs; scale is the largest
    /// input scale.
    pub fn sum(&self) -> Result<Option<Numeric>, SqlError> {
        if self.count() == 0 {
            return Ok(None);
        }
        if let Some(s) = self.special() {
            return Ok(Some(s));
        }
        Numeric::from_var(self.sum.total()).map(Some)
    }

    /// numeric_avg: the sum divided by the count with numeric division's
    /// scale; `None` without inputs.
    pub fn avg(&self) -> Result<Option<Numeric>, SqlError> {
        if self.count() == 0 {
            return Ok(None);
        }
        if let Some(s) = self.special() {
            return Ok(Some(s));
        }
        let sum = Numeric::from_var(self.sum.total())?;
        sum.div(&Numeric::from(self.n)).map(Some)
    }
}

/// State of `var_samp`, `var_pop`, `stddev_samp`, `stddev_pop` (and
/// `variance` / `stddev`, which are the sample forms).
#[derive(Clone, Debug, Default)]
pub struct NumericVariance {
    sum: NumericSum,
    squares: Acc,
}

impl NumericVariance {
    /// An empty state.
    pub fn new() -> NumericVariance {
        NumericVariance::default()
    }

    /// Accumulates one non-null input.
    pub fn add(&mut self, x: &Numeric) {
        self.sum.add(x);
        match &x.0 {
            Repr::Small { coef, dscale } => {
                let c = i128::from(*coef);
                self.squares.add_scaled(c * c, 2 * i32::from(*dscale));
            }
            Repr::Big(v) => self.squares.add_var(&Var::mul(v, v, 2 * v.dscale)),
            _ => {}
        }
    }

    /// Accumulates one integer input.
    pub fn add_i64(&mut self, x: i64) {
        self.sum.add_i64(x);
        let c = i128::from(x);
        self.squares.add_scaled(c * c, 0);
    }

    /// Merges another partial state into this one.
    pub fn combine(&mut self, other: &NumericVariance) {
        self.sum.combine(&other.sum);
        self.squares.combine(&other.squares);
    }

    /// The sum/avg state of the same inputs.
    pub fn sums(&self) -> &NumericSum {
        &self.sum
    }

    /// `var_samp`: NULL for fewer than two inputs.
    pub fn var_samp(&self) -> Result<Option<Numeric>, SqlError> {
        self.stddev_internal(true, true)
    }

    /// `var_pop`: NULL without inputs.
    pub fn var_pop(&self) -> Result<Option<Numeric>, SqlError> {
        self.stddev_internal(true, false)
    }

    /// `stddev_samp`: NULL for fewer than two inputs.
    pub fn stddev_samp(&self) -> Result<Option<Numeric>, SqlError> {
        self.stddev_internal(false, true)
    }

    /// `stddev_pop`: NULL without inputs.
    pub fn stddev_pop(&self) -> Result<Option<Numeric>, SqlError> {
        self.stddev_internal(false, false)
    }

    /// numeric_stddev_internal: (N·Σx² − (Σx)²) / (N·(N−1) or N²), with
    /// any NaN or infinity input giving NaN.
    fn stddev_internal(&self, variance: bool, sample: bool) -> Result<Option<Numeric>, SqlError> {
        let total = self.sum.count();
        if total == 0 || (sample && total <= 1) {
            return Ok(None);
        }
        if self.sum.special().is_some() {
            return Ok(Some(Numeric::NAN));
        }
        let n = Var::from_i128(i128::from(self.sum.n));
        let sum_x = self.sum.sum.total();
        let sum_x2 = self.squares.total();
        let rscale = sum_x.dscale * 2;
        let sq = Var::mul(&sum_x, &sum_x, rscale);
        let nx2 = Var::mul(&n, &sum_x2, rscale);
        let num = Var::sub(&nx2, &sq);
        if num.sign() <= 0 {
            return Ok(Some(Numeric::ZERO));
        }
        let den =
            if sample { Var::mul(&n, &Var::sub(&n, &Var::from_i128(1)), 0) } else { Var::mul(&n, &n, 0) };
        let rscale = select_div_scale(&num, &den);
        let mut r = Var::div(&num, &den, rscale, true)?;
        if !variance {
            r = sqrt_var(&r, rscale)?;
        }
        Numeric::from_var(r).map(Some)
    }
}
