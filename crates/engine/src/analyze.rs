//! ANALYZE's statistics of a sample of rows: per column the NULL
//! fraction, average width, distinct values, most common values,
//! histogram and correlation, computed as PostgreSQL's ANALYZE computes
//! them (its estimators, so that the numbers a planner reads agree):
//!
//! * the sample is `300 × target` rows drawn uniformly (a reservoir over
//!   the visible rows; the whole table when it has no more), kept in the
//!   rows' physical order;
//! * a value wider than 1024 bytes counts as non-NULL but is neither
//!   compared nor kept (STATS-BOUND), so statistics stay bounded by the
//!   target whatever the data: at most `target` common values and
//!   `target + 1` histogram bounds of at most 1024 bytes each;
//! * distinct values: all unique → minus the non-NULL fraction (scales
//!   with the table); every value repeated → the count seen; otherwise
//!   the Haas–Stokes "Duj1" estimator over the values seen once; an
//!   estimate above a tenth of the rows becomes a (negative) fraction;
//! * common values: those seen more than once, most frequent first,
//!   kept whole when they are all the values there are, else only while
//!   each is clearly above the average frequency of the rest (by two
//!   standard deviations of its sampled count);
//! * the histogram: `target + 1` bounds spaced evenly through the sorted
//!   values that are not common values; the correlation: of the sorted
//!   order with the sample's order.
//!
//! A type without an ordering gets only the common values and the
//! distinct count.

use std::cmp::Ordering;

use snapscale_values::{SqlType, Value};

use crate::stats::ColumnStats;

/// PostgreSQL's widest value that statistics keep (WIDTH_THRESHOLD).
pub const WIDTH_THRESHOLD: usize = 1024;
/// Rows sampled per unit of statistics target.
pub const ROWS_PER_TARGET: usize = 300;
/// `default_statistics_target`'s default and range.
pub const DEFAULT_TARGET: i32 = 100;
pub const MAX_TARGET: i32 = 10_000;

/// A uniform sample of at most `size` items of a stream (Algorithm R),
/// returned in the stream's order.
pub struct Reservoir<T> {
    kept: Vec<(u64, T)>,
    seen: u64,
    size: usize,
    rng: u64,
}

impl<T> Reservoir<T> {
    pub fn new(size: usize, seed: u64) -> Self {
        Reservoir { kept: Vec::new(), seen: 0, size, rng: seed | 1 }
    }

    fn next_random(&mut self) -> u64 {
        // xorshift64*: statistical sampling only, not security.
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn offer(&mut self, item: T) {
        let n = self.seen;
        self.seen += 1;
        if self.kept.len() < self.size {
            self.kept.push((n, item));
            return;
        }
        let j = self.next_random() % self.seen;
        if (j as usize) < self.size {
            self.kept[j as usize] = (n, item);
        }
    }

    /// The items kept, in the order they came, and how many came.
    pub fn finish(mut self) -> (Vec<T>, u64) {
        self.kept.sort_by_key(|(n, _)| *n);
        (self.kept.into_iter().map(|(_, t)| t).collect(), self.seen)
    }
}

/// The width PostgreSQL gives a value of a fixed-width type (typlen).
pub fn fixed_width(ty: SqlType) -> Option<i32> {
    Some(match ty {
        SqlType::Bool | SqlType::Char1 => 1,
        SqlType::Int2 => 2,
        SqlType::Int4 | SqlType::Float4 | SqlType::Date | SqlType::Oid | SqlType::Reg(_) => 4,
        SqlType::Int8 | SqlType::Float8 | SqlType::Timestamp | SqlType::TimestampTz => 8,
        SqlType::Interval | SqlType::Uuid => 16,
        SqlType::Name => 64,
        _ => return None,
    })
}

/// A variable-width value's size as stored (a short value's 1-byte
/// header, a longer one's 4 bytes) and its raw size.
fn varlena_size(v: &Value) -> (usize, usize) {
    let raw = match v {
        Value::Text(s) => s.len(),
        Value::Bytes(b) => b.len(),
        Value::Array(a) => {
            // Header, dimensions, then the elements (fixed ones at their
            // width, variable ones with a header each).
            12 + 8 * a.ndims() + a.items().iter().map(|e| varlena_size(e).0).sum::<usize>()
        }
        Value::Numeric(_) => {
            // Base-10000 digits of two bytes after a two-byte header.
            let text = v.to_text().unwrap_or_default();
            let digits = text.chars().filter(char::is_ascii_digit).count();
            2 + 2 * digits.div_ceil(4)
        }
        Value::Int(_) | Value::Float(_) | Value::Date(_) => 8,
        Value::Null => 0,
        other => other.to_text().map_or(0, |t| t.len()),
    };
    let stored = if raw <= 126 { raw + 1 } else { raw + 4 };
    (stored, raw)
}

/// The statistics of one column from its values in a sample of
/// `sample_rows` rows (in the rows' order) of a table of `total_rows`
/// live rows, under statistics target `target`.
pub fn column_stats(
    name: &str,
    ty: SqlType,
    values: &[&Value],
    target: usize,
    total_rows: f64,
) -> ColumnStats {
    let sample_rows = values.len();
    let fixed = fixed_width(ty);
    let mut nulls = 0usize;
    let mut too_wide = 0usize;
    let mut total_width = 0usize;
    let mut kept: Vec<&Value> = Vec::with_capacity(values.len());
    for v in values {
        if matches!(v, Value::Null) {
            nulls += 1;
            continue;
        }
        if fixed.is_none() {
            let (stored, raw) = varlena_size(v);
            total_width += stored;
            if raw > WIDTH_THRESHOLD {
                too_wide += 1;
                continue;
            }
        }
        kept.push(v);
    }
    let non_null = sample_rows - nulls;
    let mut stats = ColumnStats {
        name: name.to_owned(),
        ty,
        null_frac: if sample_rows == 0 { 0.0 } else { (nulls as f64 / sample_rows as f64) as f32 },
        avg_width: match fixed {
            Some(w) => w,
            None if non_null > 0 => (total_width as f64 / non_null as f64) as i32,
            None => 0,
        },
        n_distinct: 0.0,
        mcv: Vec::new(),
        mcf: Vec::new(),
        histogram: Vec::new(),
        correlation: None,
    };
    if kept.is_empty() {
        // Only NULLs (distinct unknown), or only values too wide to
        // compare (assumed unique).
        if non_null > 0 {
            stats.n_distinct = -(1.0 - stats.null_frac);
        }
        return stats;
    }
    let sortable = kept.iter().all(|v| v.compare(v).is_some());
    let counts = Counts::of(&kept, sortable);
    let null_frac = f64::from(stats.null_frac);
    let distinct = estimate_distinct(&counts, too_wide, sample_rows, nulls, total_rows, null_frac);
    stats.n_distinct = distinct as f32;
    // The common values: counts above one, most frequent first (the
    // sort is stable: equal counts in value order).
    let mut track: Vec<(usize, usize)> =
        counts.runs.iter().enumerate().filter(|(_, r)| r.1 > 1).map(|(i, r)| (i, r.1)).collect();
    track.sort_by_key(|t| std::cmp::Reverse(t.1));
    let all_fit =
        track.len() == counts.runs.len() && too_wide == 0 && distinct > 0.0 && track.len() <= target;
    let keep = if all_fit {
        track.len()
    } else {
        track.truncate(target);
        let counts: Vec<usize> = track.iter().map(|t| t.1).collect();
        common_values_kept(&counts, distinct, null_frac, sample_rows as f64, total_rows)
    };
    track.truncate(keep);
    for &(run, count) in &track {
        stats.mcv.push(counts.runs[run].0.clone());
        stats.mcf.push((count as f64 / sample_rows as f64) as f32);
    }
    if !sortable {
        return stats;
    }
    // The histogram over the sorted values that are not common values.
    let rest_distinct = counts.runs.len() - track.len();
    let bounds = rest_distinct.min(target + 1);
    if bounds >= 2 {
        let common: std::collections::HashSet<usize> = track.iter().map(|t| t.0).collect();
        let rest: Vec<&Value> = counts
            .runs
            .iter()
            .enumerate()
            .filter(|(i, _)| !common.contains(i))
            .flat_map(|(_, (v, n))| std::iter::repeat_n(*v, *n))
            .collect();
        stats.histogram = spaced(&rest, bounds).into_iter().cloned().collect();
    }
    if counts.sorted_positions.len() > 1 {
        stats.correlation = Some(correlation(&counts.sorted_positions) as f32);
    }
    stats
}

/// The distinct values of a sample: each value with its count (sorted
/// by value when the type has an order, else in order of appearance),
/// and for a sortable type the sample positions in sorted order.
struct Counts<'a> {
    runs: Vec<(&'a Value, usize)>,
    sorted_positions: Vec<usize>,
}

impl<'a> Counts<'a> {
    fn of(kept: &[&'a Value], sortable: bool) -> Counts<'a> {
        if sortable {
            let mut order: Vec<usize> = (0..kept.len()).collect();
            // Ties keep the sample's order (as PostgreSQL breaks them), which
            // the correlation reads.
            order.sort_by(|&a, &b| kept[a].compare(kept[b]).unwrap_or(Ordering::Equal));
            let mut runs: Vec<(&Value, usize)> = Vec::new();
            for &i in &order {
                match runs.last_mut() {
                    Some((v, n)) if v.compare(kept[i]) == Some(Ordering::Equal) => *n += 1,
                    _ => runs.push((kept[i], 1)),
                }
            }
            Counts { runs, sorted_positions: order }
        } else {
            let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
            let mut runs: Vec<(&Value, usize)> = Vec::new();
            for v in kept {
                let key = v.to_text().unwrap_or_default();
                match index.get(&key) {
                    Some(&i) => runs[i].1 += 1,
                    None => {
                        index.insert(key, runs.len());
                        runs.push((v, 1));
                    }
                }
            }
            Counts { runs, sorted_positions: Vec::new() }
        }
    }
}

/// PostgreSQL's distinct-values estimate (see the module documentation).
fn estimate_distinct(
    counts: &Counts<'_>,
    too_wide: usize,
    sample_rows: usize,
    nulls: usize,
    total_rows: f64,
    null_frac: f64,
) -> f64 {
    let seen = counts.runs.len();
    let multiple = counts.runs.iter().filter(|r| r.1 > 1).count();
    let estimate = if multiple == 0 {
        -(1.0 - null_frac)
    } else if too_wide == 0 && multiple == seen {
        seen as f64
    } else {
        let once = (seen - multiple + too_wide) as f64;
        let d = once + multiple as f64;
        let n = (sample_rows - nulls) as f64;
        let big_n = total_rows * (1.0 - null_frac);
        let denom = (n - once) + once * n / big_n;
        let mut est = if denom > 0.0 { n * d / denom } else { d };
        est = est.max(d).min(big_n.max(d));
        (est + 0.5).floor()
    };
    if estimate > 0.1 * total_rows {
        -(estimate / total_rows)
    } else {
        estimate
    }
}

/// How many of the candidate common values (their sample counts, most
/// frequent first) to keep: all of them when the sample is the table,
/// else only those clearly more frequent than the average of the rest.
fn common_values_kept(
    counts: &[usize],
    distinct: f64,
    null_frac: f64,
    sample_rows: f64,
    total_rows: f64,
) -> usize {
    let mut keep = counts.len();
    if sample_rows >= total_rows || total_rows <= 1.0 {
        return keep;
    }
    let table_distinct = if distinct < 0.0 { -distinct * total_rows } else { distinct };
    let mut sum: f64 = counts.iter().take(keep.saturating_sub(1)).map(|&c| c as f64).sum();
    while keep > 0 {
        let last = counts[keep - 1] as f64;
        let mut selec = (1.0 - sum / sample_rows - null_frac).clamp(0.0, 1.0);
        let others = table_distinct - (keep as f64 - 1.0);
        selec = if others > 1.0 { selec / others } else { 1.0 };
        if last > selec * sample_rows {
            let (n, big_n) = (sample_rows, total_rows);
            let k = big_n * last / n;
            let variance = n * k * (big_n - k) * (big_n - n) / (big_n * big_n * (big_n - 1.0));
            if last > selec * sample_rows + 2.0 * variance.max(0.0).sqrt() + 0.5 {
                break;
            }
        }
        keep -= 1;
        if keep == 0 {
            break;
        }
        sum -= counts[keep - 1] as f64;
    }
    keep
}

/// `count` items spaced evenly through `sorted`, its first and last
/// included (integer steps, the remainder spread as PostgreSQL does).
fn spaced<'a>(sorted: &[&'a Value], count: usize) -> Vec<&'a Value> {
    let n = sorted.len();
    let steps = count - 1;
    let (delta, frac) = ((n - 1) / steps, (n - 1) % steps);
    let (mut pos, mut pos_frac) = (0usize, 0usize);
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        out.push(sorted[pos.min(n - 1)]);
        pos += delta;
        pos_frac += frac;
        if pos_frac >= steps {
            pos += 1;
            pos_frac -= steps;
        }
    }
    out
}

/// The correlation between sorted rank and sample position, given the
/// sample positions in sorted order.
fn correlation(positions: &[usize]) -> f64 {
    let n = positions.len() as f64;
    let xy: f64 = positions.iter().enumerate().map(|(i, &p)| i as f64 * p as f64).sum();
    let x = (n - 1.0) * n / 2.0;
    let x2 = (n - 1.0) * n * (2.0 * n - 1.0) / 6.0;
    (n * xy - x * x) / (n * x2 - x * x)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(v: &[Option<i64>]) -> Vec<Value> {
        v.iter().map(|x| x.map_or(Value::Null, Value::Int)).collect()
    }

    fn stats(values: &[Value], target: usize) -> ColumnStats {
        let refs: Vec<&Value> = values.iter().collect();
        column_stats("c", SqlType::Int4, &refs, target, values.len() as f64)
    }

    #[test]
    fn repeated_values_are_all_common() {
        let v = ints(&(1..=1000).map(|i| Some(i % 10)).collect::<Vec<_>>());
        let s = stats(&v, 100);
        assert_eq!(s.n_distinct, 10.0);
        assert_eq!(s.mcv.len(), 10);
        assert!(s.mcf.iter().all(|&f| (f - 0.1).abs() < 1e-6));
        assert!(s.histogram.is_empty());
        assert_eq!(s.null_frac, 0.0);
        assert_eq!(s.avg_width, 4);
    }

    #[test]
    fn unique_values_scale_with_the_table() {
        let v = ints(&(1..=1000).map(Some).collect::<Vec<_>>());
        let s = stats(&v, 100);
        assert_eq!(s.n_distinct, -1.0);
        assert!(s.mcv.is_empty());
        assert_eq!(s.histogram.len(), 101);
        assert_eq!(s.histogram[0], Value::Int(1));
        assert_eq!(s.histogram[100], Value::Int(1000));
        assert_eq!(s.correlation, Some(1.0));
    }

    #[test]
    fn target_bounds_the_lists() {
        let v = ints(&(1..=1000).map(|i| Some(i % 50)).collect::<Vec<_>>());
        let s = stats(&v, 10);
        assert!(s.mcv.len() <= 10);
        assert!(s.histogram.len() <= 11);
    }

    #[test]
    fn nulls_only() {
        let v = ints(&[None, None, None]);
        let s = stats(&v, 100);
        assert_eq!((s.null_frac, s.n_distinct, s.mcv.len()), (1.0, 0.0, 0));
    }

    #[test]
    fn wide_values_are_not_kept() {
        let v: Vec<Value> = (0..10).map(|_| Value::Text("x".repeat(10_000))).collect();
        let refs: Vec<&Value> = v.iter().collect();
        let s = column_stats("c", SqlType::Text, &refs, 100, 10.0);
        assert!(s.mcv.is_empty() && s.histogram.is_empty());
        assert_eq!(s.n_distinct, -1.0);
    }

    #[test]
    fn duj1_between_seen_and_rows() {
        // Half the sample seen once, half in pairs, from a larger table.
        let mut v: Vec<Option<i64>> = (0..100).map(Some).collect();
        v.extend((0..50).flat_map(|i| [Some(1000 + i), Some(1000 + i)]));
        let v = ints(&v);
        let refs: Vec<&Value> = v.iter().collect();
        let s = column_stats("c", SqlType::Int4, &refs, 100, 10_000.0);
        assert!(s.n_distinct >= 150.0 && s.n_distinct <= 1000.0, "{}", s.n_distinct);
    }

    #[test]
    fn histogram_spacing() {
        let v: Vec<Value> = (0..10).map(Value::Int).collect();
        let r: Vec<&Value> = v.iter().collect();
        let picked: Vec<i64> =
            spaced(&r, 4).iter().map(|v| if let Value::Int(i) = v { *i } else { -1 }).collect();
        assert_eq!(picked, vec![0, 3, 6, 9]);
    }

    #[test]
    fn reservoir_keeps_order_and_size() {
        let mut r = Reservoir::new(10, 42);
        for i in 0..1000 {
            r.offer(i);
        }
        let (kept, seen) = r.finish();
        assert_eq!((kept.len(), seen), (10, 1000));
        assert!(kept.windows(2).all(|w| w[0] < w[1]));
    }
}
