//! Where a panel's legend hides the least of its lines.
//!
//! A fixed corner is wrong for some experiment: falling throughput curves
//! leave the upper right empty, rising latency curves fill it. So each panel
//! puts its legend in the corner its lines cross least, much like
//! matplotlib's `loc="best"`.

use plotters::chart::SeriesLabelPosition;

/// Samples taken along each line segment when measuring overlap.
const SAMPLES_PER_SEGMENT: usize = 16;

/// A corner of a panel's plotting area.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Corner {
    UpperRight,
    UpperLeft,
    LowerRight,
    LowerLeft,
}

impl Corner {
    /// Preference order when corners tie: upper right is where readers look
    /// for a legend first.
    const ALL: [Corner; 4] = [Corner::UpperRight, Corner::UpperLeft, Corner::LowerRight, Corner::LowerLeft];

    /// The plotters position for this corner.
    pub(crate) fn position(self) -> SeriesLabelPosition {
        match self {
            Corner::UpperRight => SeriesLabelPosition::UpperRight,
            Corner::UpperLeft => SeriesLabelPosition::UpperLeft,
            Corner::LowerRight => SeriesLabelPosition::LowerRight,
            Corner::LowerLeft => SeriesLabelPosition::LowerLeft,
        }
    }

    /// Whether a point lies under a legend of `size` in this corner.
    fn covers(self, size: (f64, f64), (x, y): (f64, f64)) -> bool {
        let in_x = match self {
            Corner::UpperLeft | Corner::LowerLeft => x <= size.0,
            Corner::UpperRight | Corner::LowerRight => x >= 1.0 - size.0,
        };
        let in_y = match self {
            Corner::LowerLeft | Corner::LowerRight => y <= size.1,
            Corner::UpperLeft | Corner::UpperRight => y >= 1.0 - size.1,
        };
        in_x && in_y
    }
}

/// Picks the corner where a legend of `size` covers the fewest line samples.
///
/// `lines` holds each series' points and `size` the legend's width and
/// height, all as fractions of the plotting area with (0, 0) at its lower
/// left. Lines are sampled along their segments, not only at their points,
/// because a legend over a line hides it just as much as one over a marker.
pub(crate) fn emptiest_corner(lines: &[Vec<(f64, f64)>], size: (f64, f64)) -> Corner {
    let samples: Vec<(f64, f64)> = lines.iter().flat_map(|line| sample(line)).collect();
    Corner::ALL
        .into_iter()
        .min_by_key(|corner| samples.iter().filter(|&&p| corner.covers(size, p)).count())
        .unwrap_or(Corner::UpperRight)
}

/// Points spread evenly along a polyline, including its vertices.
fn sample(line: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut points: Vec<(f64, f64)> = line.first().copied().into_iter().collect();
    for pair in line.windows(2) {
        let ((x0, y0), (x1, y1)) = (pair[0], pair[1]);
        points.extend((1..=SAMPLES_PER_SEGMENT).map(|i| {
            let t = i as f64 / SAMPLES_PER_SEGMENT as f64;
            (x0 + (x1 - x0) * t, y0 + (y1 - y0) * t)
        }));
    }
    points
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIZE: (f64, f64) = (0.3, 0.2);

    #[test]
    fn empty_panel_keeps_the_usual_corner() {
        assert_eq!(emptiest_corner(&[], SIZE), Corner::UpperRight);
    }

    #[test]
    fn rising_line_leaves_upper_left_free() {
        let rising = vec![(0.0, 0.0), (1.0, 1.0)];
        assert_eq!(emptiest_corner(&[rising], SIZE), Corner::UpperLeft);
    }

    #[test]
    fn flat_top_and_falling_lines_leave_lower_left_free() {
        let flat = vec![(0.0, 0.95), (1.0, 0.95)];
        let falling = vec![(0.0, 0.9), (1.0, 0.05)];
        assert_eq!(emptiest_corner(&[flat, falling], SIZE), Corner::LowerLeft);
    }
}
