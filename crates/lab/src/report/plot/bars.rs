//! Grouped bar charts, for results whose cases are names rather than
//! numbers (a line through them would suggest an order that is not there).

use std::path::Path;

use plotters::prelude::*;

use super::colours::ColourKey;
use super::SMALL_FONT;

/// One bar chart: a group of bars per case, one bar per series.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Bars {
    /// Caption above the chart.
    pub title: String,
    /// Label beside the y axis (linear, from 0).
    pub y_label: String,
    /// The cases, left to right, named under their group.
    pub cases: Vec<String>,
    /// `(label, one value per case)`; a missing value is NaN and not drawn.
    pub series: Vec<(String, Vec<f64>)>,
}

impl Bars {
    /// Draws the chart as an SVG file at `path`, replacing any existing
    /// file; each bar carries its value above it.
    ///
    /// # Errors
    ///
    /// A description of the failure, including the path.
    pub fn write_svg(&self, path: &Path) -> Result<(), String> {
        let fail = |e: DrawingAreaErrorKind<std::io::Error>| format!("{}: {e}", path.display());
        let width = (160 * self.cases.len().max(1) as u32 + 120).max(480);
        let root = SVGBackend::new(path, (width, 400)).into_drawing_area();
        root.fill(&WHITE).map_err(fail)?;
        let top =
            self.series.iter().flat_map(|(_, v)| v).copied().filter(|v| v.is_finite()).fold(0.0, f64::max);
        let cases = self.cases.len().max(1) as f64;
        let mut chart = ChartBuilder::on(&root)
            .caption(&self.title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d(0.0..cases, 0.0..(top * 1.15).max(f64::MIN_POSITIVE))
            .map_err(fail)?;
        let names = self.cases.clone();
        let name = move |x: &f64| {
            let i = x.floor() as usize;
            if (x - x.floor() - 0.5).abs() < 1e-9 {
                names.get(i).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        };
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(2 * self.cases.len() + 1)
            .x_label_formatter(&name)
            .y_label_formatter(&|v| format_value(*v))
            .y_desc(&self.y_label)
            .label_style(("sans-serif", SMALL_FONT))
            .axis_desc_style(("sans-serif", 14))
            .light_line_style(BLACK.mix(0.05))
            .bold_line_style(BLACK.mix(0.15))
            .draw()
            .map_err(fail)?;
        let colours = ColourKey::new(self.series.iter().map(|(label, _)| label.as_str()));
        let width = 0.8 / self.series.len().max(1) as f64;
        for (k, (label, values)) in self.series.iter().enumerate() {
            let colour = colours.colour(label);
            let bars = values.iter().enumerate().filter(|(_, v)| v.is_finite()).map(|(i, &v)| {
                let left = i as f64 + 0.1 + k as f64 * width;
                Rectangle::new([(left, 0.0), (left + width * 0.9, v)], colour.filled())
            });
            chart
                .draw_series(bars)
                .map_err(fail)?
                .label(label.as_str())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], colour.filled()));
            let values_text = values.iter().enumerate().filter(|(_, v)| v.is_finite()).map(|(i, &v)| {
                let left = i as f64 + 0.1 + k as f64 * width;
                Text::new(format_value(v), (left, v), ("sans-serif", 11).into_font().color(&BLACK))
            });
            chart.draw_series(values_text).map_err(fail)?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .label_font(("sans-serif", SMALL_FONT))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.3))
            .draw()
            .map_err(fail)?;
        root.present().map_err(fail)
    }
}

/// A bar's value in few characters: 3.3, 42, 1 012.
fn format_value(v: f64) -> String {
    if v < 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_name_their_cases_and_series() {
        let dir = std::env::temp_dir().join(format!("snapscale-bars-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("bars.svg");
        let bars = Bars {
            title: "Visibility".into(),
            y_label: "ns per check".into(),
            cases: vec!["few xacts".into(), "all different subxids".into()],
            series: vec![("known-assigned".into(), vec![3.3, 20.7]), ("csn".into(), vec![11.0, f64::NAN])],
        };
        bars.write_svg(&path).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        for text in ["Visibility", "few xacts", "all different subxids", "known-assigned", "csn", "3.3", "21"]
        {
            assert!(svg.contains(text), "missing {text:?}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
