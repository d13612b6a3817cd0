//! How a figure's axes place values and where their ticks go.
//!
//! plotters' own coordinate types cannot put a zero on a logarithmic axis,
//! and the session-count axes of snapscale's experiments start at "0 idle
//! sessions". So the figure uses this one axis type for all three scales and
//! chooses the tick positions and labels itself.

use std::ops::Range;

use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, Ranged, ValueFormatter};

/// Share of the tick span left empty at each end, so markers on the first and
/// last tick are not cut in half by the frame.
const PADDING: f64 = 0.03;

/// Axes reaching this far abbreviate their large labels, which keeps y labels
/// narrow enough for the label area; below it numbers are printed in full so
/// session counts such as 10000 stay recognisable.
const ABBREVIATE_FROM: f64 = 1e5;

/// How an axis turns a data value into a position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scale {
    /// Position proportional to the value.
    Linear,
    /// Position proportional to `log10(value)`; only positive values.
    Log,
    /// Position proportional to [`symlog`]`(value)`; values ≥ 0, so zero fits.
    Symlog,
}

impl Scale {
    /// Maps a data value to axis space.
    pub(crate) fn forward(self, value: f64) -> f64 {
        match self {
            Scale::Linear => value,
            Scale::Log => value.log10(),
            Scale::Symlog => symlog(value),
        }
    }

    /// Maps axis space back to a data value.
    fn inverse(self, position: f64) -> f64 {
        match self {
            Scale::Linear => position,
            Scale::Log => 10f64.powf(position),
            Scale::Symlog => symlog_inverse(position),
        }
    }

    /// Whether `value` has a position on this scale at all.
    pub(crate) fn accepts(self, value: f64) -> bool {
        value.is_finite()
            && match self {
                Scale::Linear => true,
                Scale::Log => value > 0.0,
                Scale::Symlog => value >= 0.0,
            }
    }
}

/// The transform of a logarithmic x axis: `log10(x + 1)`.
///
/// It maps 0 to 0 and is within 0.05 decades of `log10(x)` from x = 10 on, so
/// session counts of 0, 10, 100, … land (almost) on evenly spaced decades,
/// with 0 one decade left of 10. Between 0 and 10 it is closer to linear than
/// logarithmic; that is the price of showing zero at all.
pub(crate) fn symlog(x: f64) -> f64 {
    (x + 1.0).log10()
}

/// The inverse of [`symlog`].
pub(crate) fn symlog_inverse(position: f64) -> f64 {
    10f64.powf(position) - 1.0
}

/// One axis of one chart: its scale, visible range and ticks.
#[derive(Clone, Debug)]
pub(crate) struct Axis {
    scale: Scale,
    /// Visible range in axis space (after [`Scale::forward`]).
    visible: Range<f64>,
    /// Labelled ticks, as data values.
    ticks: Vec<f64>,
    /// Unlabelled grid lines between ticks, as data values.
    minor: Vec<f64>,
    /// Decimals that tell adjacent linear ticks apart.
    decimals: usize,
    /// Whether labels abbreviate thousands and millions (`250k`, `1.5M`).
    abbreviate: bool,
}

impl Axis {
    /// Fits an axis around `values`, ignoring those the scale cannot show.
    ///
    /// The range is widened to whole ticks (decades on logarithmic scales,
    /// 1-2-5 steps on linear ones) so both ends are labelled. With
    /// `include_zero`, a linear axis reaches zero: a throughput axis that
    /// starts at 9,000 makes a 5% difference look like a collapse.
    pub(crate) fn fit(scale: Scale, values: impl IntoIterator<Item = f64>, include_zero: bool) -> Axis {
        let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
        for value in values.into_iter().filter(|&v| scale.accepts(v)) {
            min = min.min(value);
            max = max.max(value);
        }
        let bounds = (min <= max).then_some((min, max));
        let (ticks, decimals) = match scale {
            Scale::Linear => linear_ticks(bounds, include_zero),
            Scale::Log => (log_ticks(bounds), 0),
            Scale::Symlog => (symlog_ticks(bounds), 0),
        };
        let minor = match scale {
            Scale::Linear => Vec::new(),
            Scale::Log | Scale::Symlog => minor_decade_ticks(&ticks),
        };
        let first = scale.forward(ticks[0]);
        let last = scale.forward(ticks[ticks.len() - 1]);
        let pad = (last - first) * PADDING;
        // Decide for the whole axis, so one axis never mixes 50000 and 150k.
        let abbreviate = ticks.iter().any(|t| t.abs() >= ABBREVIATE_FROM);
        Axis { scale, visible: first - pad..last + pad, ticks, minor, decimals, abbreviate }
    }

    /// Where `value` falls along the axis: 0 at the start, 1 at the end.
    pub(crate) fn fraction(&self, value: f64) -> f64 {
        (self.scale.forward(value) - self.visible.start) / (self.visible.end - self.visible.start)
    }

    /// The text shown at a tick.
    pub(crate) fn label(&self, value: f64) -> String {
        if self.abbreviate && value.abs() >= 1e3 {
            return abbreviated(value);
        }
        match self.scale {
            Scale::Linear => number_label(value, self.decimals),
            // Decade ticks below 1 need as many decimals as their exponent.
            Scale::Log | Scale::Symlog => {
                let decimals =
                    if value > 0.0 && value < 1.0 { (-value.log10() - 1e-9).ceil() as usize } else { 0 };
                number_label(value, decimals)
            }
        }
    }
}

impl Ranged for Axis {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        limit.0 + (self.fraction(*value) * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        let wanted = if hint.weight().allow_light_points() { &self.minor } else { &self.ticks };
        let max = hint.max_num_points().max(1);
        // Keep every n-th tick rather than letting labels overlap.
        let every = wanted.len().div_ceil(max).max(1);
        wanted.iter().copied().step_by(every).collect()
    }

    fn range(&self) -> Range<f64> {
        self.scale.inverse(self.visible.start)..self.scale.inverse(self.visible.end)
    }
}

impl ValueFormatter<f64> for Axis {
    fn format_ext(&self, value: &f64) -> String {
        self.label(*value)
    }
}

/// Ticks at multiples of a 1-2-5 step covering the values, plus the decimals
/// needed to print that step.
fn linear_ticks(bounds: Option<(f64, f64)>, include_zero: bool) -> (Vec<f64>, usize) {
    let (mut min, mut max) = bounds.unwrap_or((0.0, 1.0));
    if include_zero {
        min = min.min(0.0);
        max = max.max(0.0);
    }
    if max - min <= f64::EPSILON * max.abs().max(1.0) {
        // A single value still needs a range around it to be drawn.
        let half = if min == 0.0 { 1.0 } else { min.abs() * 0.1 };
        min -= half;
        max += half;
    }
    let step = nice_step((max - min) / 5.0);
    // Multiplying integers by the step avoids accumulating rounding error.
    let first = (min / step + 1e-9).floor() as i64;
    let last = (max / step - 1e-9).ceil() as i64;
    let ticks = (first..=last).map(|k| k as f64 * step).collect();
    let decimals = (-step.log10() - 1e-9).ceil().max(0.0) as usize;
    (ticks, decimals)
}

/// The 1, 2 or 5 times a power of ten closest above `raw`.
fn nice_step(raw: f64) -> f64 {
    let magnitude = 10f64.powf(raw.log10().floor());
    let mantissa = raw / magnitude;
    let nice = if mantissa <= 1.0 {
        1.0
    } else if mantissa <= 2.0 {
        2.0
    } else if mantissa <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * magnitude
}

/// Decades from the one at or below the smallest value to the one at or
/// above the largest; at least two so the axis has a span.
fn log_ticks(bounds: Option<(f64, f64)>) -> Vec<f64> {
    let (min, max) = bounds.unwrap_or((1.0, 10.0));
    let first = min.log10().floor() as i32;
    let last = (max.log10().ceil() as i32).max(first + 1);
    (first..=last).map(|k| 10f64.powi(k)).collect()
}

/// Ticks for a [`symlog`] axis: 0 (when the axis starts there) and decades.
///
/// The tick at 1 is dropped when 10 is also shown: it sits only 0.3 decades
/// from 0 and the two labels would collide.
pub(crate) fn symlog_ticks(bounds: Option<(f64, f64)>) -> Vec<f64> {
    let (min, max) = bounds.unwrap_or((0.0, 1.0));
    let last = (max.log10().ceil() as i32).max(0);
    let mut ticks = Vec::new();
    let first = if min < 1.0 {
        ticks.push(0.0);
        if last == 0 {
            0
        } else {
            1
        }
    } else {
        (min.log10().floor() as i32).min(last - 1)
    };
    ticks.extend((first..=last).map(|k| 10f64.powi(k)));
    ticks
}

/// Light grid lines at 2–9 times each decade between the first and last tick.
fn minor_decade_ticks(ticks: &[f64]) -> Vec<f64> {
    let positive: Vec<f64> = ticks.iter().copied().filter(|&t| t > 0.0).collect();
    let (Some(&low), Some(&high)) = (positive.first(), positive.last()) else {
        return Vec::new();
    };
    let mut minor = Vec::new();
    let mut decade = low;
    while decade < high {
        minor.extend((2..=9).map(|m| f64::from(m) * decade));
        decade *= 10.0;
    }
    minor
}

/// Prints a tick value with a fixed number of decimals; zero is always `0`.
fn number_label(value: f64, decimals: usize) -> String {
    if value == 0.0 {
        return "0".to_owned();
    }
    format!("{value:.decimals$}")
}

/// Prints a value of 1000 or more as thousands or millions: `250k`, `1.5M`.
fn abbreviated(value: f64) -> String {
    if value.abs() >= 1e6 {
        format!("{}M", trim_zeros(&format!("{:.2}", value / 1e6)))
    } else {
        format!("{}k", trim_zeros(&format!("{:.2}", value / 1e3)))
    }
}

/// Drops trailing zeros after a decimal point: `"1.50"` → `"1.5"`.
fn trim_zeros(text: &str) -> &str {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symlog_maps_zero_to_origin_and_tracks_decades() {
        assert_eq!(symlog(0.0), 0.0);
        assert!((symlog(9.0) - 1.0).abs() < 1e-12);
        for x in [10.0, 100.0, 1000.0, 10_000.0] {
            let off_by = symlog(x) - f64::log10(x);
            assert!(off_by > 0.0 && off_by < 0.05, "x = {x}: {off_by}");
        }
        for x in [0.0, 1.0, 42.0, 12_345.0] {
            assert!((symlog_inverse(symlog(x)) - x).abs() < 1e-9);
        }
    }

    #[test]
    fn symlog_ticks_for_session_counts() {
        let axis = Axis::fit(Scale::Symlog, [0.0, 10.0, 100.0, 1000.0, 10_000.0], false);
        let labels: Vec<String> = axis.ticks.iter().map(|&t| axis.label(t)).collect();
        assert_eq!(labels, ["0", "10", "100", "1000", "10000"]);
    }

    #[test]
    fn symlog_ticks_without_zero_start_at_a_decade() {
        assert_eq!(symlog_ticks(Some((50.0, 2000.0))), [10.0, 100.0, 1000.0, 10_000.0]);
        assert_eq!(symlog_ticks(Some((0.0, 1.0))), [0.0, 1.0]);
        assert_eq!(symlog_ticks(Some((0.0, 0.0))), [0.0, 1.0]);
        assert_eq!(symlog_ticks(None), [0.0, 1.0]);
        assert_eq!(symlog_ticks(Some((0.0, 7.0))), [0.0, 10.0]);
    }

    #[test]
    fn symlog_axis_ignores_negative_values() {
        let axis = Axis::fit(Scale::Symlog, [-5.0, 0.0, 100.0], false);
        assert_eq!(axis.ticks, [0.0, 10.0, 100.0]);
    }

    #[test]
    fn zero_maps_left_of_ten_by_one_decade() {
        let axis = Axis::fit(Scale::Symlog, [0.0, 10_000.0], false);
        let limit = (0, 1000);
        let zero = axis.map(&0.0, limit);
        let ten = axis.map(&10.0, limit);
        let hundred = axis.map(&100.0, limit);
        let decade = hundred - ten;
        assert!((ten - zero - decade).abs() <= decade / 10, "{zero} {ten} {hundred}");
    }

    #[test]
    fn log_axis_uses_decades() {
        let axis = Axis::fit(Scale::Log, [0.0, 0.02, 3.0, 450.0], false);
        let labels: Vec<String> = axis.ticks.iter().map(|&t| axis.label(t)).collect();
        assert_eq!(labels, ["0.01", "0.1", "1", "10", "100", "1000"]);
        let single = Axis::fit(Scale::Log, [5.0], false);
        assert_eq!(single.ticks, [1.0, 10.0]);
    }

    #[test]
    fn linear_axis_uses_round_steps() {
        let axis = Axis::fit(Scale::Linear, [1200.0, 9100.0], true);
        let labels: Vec<String> = axis.ticks.iter().map(|&t| axis.label(t)).collect();
        assert_eq!(labels, ["0", "2000", "4000", "6000", "8000", "10000"]);

        let axis = Axis::fit(Scale::Linear, [0.1, 0.3], false);
        let labels: Vec<String> = axis.ticks.iter().map(|&t| axis.label(t)).collect();
        assert_eq!(labels, ["0.10", "0.15", "0.20", "0.25", "0.30"]);
    }

    #[test]
    fn big_axes_abbreviate_every_large_label() {
        let labels = |axis: &Axis| -> Vec<String> { axis.ticks.iter().map(|&t| axis.label(t)).collect() };
        let axis = Axis::fit(Scale::Linear, [0.0, 120_000.0], true);
        assert_eq!(labels(&axis), ["0", "50k", "100k", "150k"]);
        let axis = Axis::fit(Scale::Log, [20.0, 1_500_000.0], false);
        assert_eq!(labels(&axis), ["10", "100", "1k", "10k", "100k", "1M", "10M"]);
        let axis = Axis::fit(Scale::Linear, [0.0, 80_000.0], true);
        assert_eq!(labels(&axis), ["0", "20000", "40000", "60000", "80000"]);
        assert_eq!(abbreviated(1_250_000.0), "1.25M");
        assert_eq!(number_label(-0.0, 2), "0");
    }

    #[test]
    fn key_points_thin_out_instead_of_overlapping() {
        let axis = Axis::fit(Scale::Linear, [0.0, 100.0], false);
        assert_eq!(axis.ticks.len(), 6);
        assert_eq!(axis.key_points(plotters::coord::ranged1d::BoldPoints(3)).len(), 3);
    }
}
