//! Aggregates: each one's running state over a group's rows.

use snapscale_sqlstate::SqlState;
use snapscale_values::json::{JsonAgg, JsonObjectAgg, JsonbAgg, JsonbObjectAgg};
use snapscale_values::numeric::{Numeric, NumericSum, NumericVariance};
use snapscale_values::{SqlError, SqlType, Value};

use crate::expr::{compare, AggFunc};

/// The json aggregates' states.
#[derive(Clone)]
enum JsonState {
    Json(JsonAgg),
    Jsonb(JsonbAgg),
    JsonObject(JsonObjectAgg),
    JsonbObject(JsonbObjectAgg),
}

/// One aggregate's running state.
#[derive(Default)]
pub(super) struct Acc {
    count: i64,
    /// Integer inputs' exact sum (sum and avg of integers).
    int_sum: i128,
    float_sum: f64,
    /// sum(real)'s sum, added in real as PostgreSQL adds it.
    float4_sum: f32,
    /// numeric inputs' sum (sum and avg of numeric).
    numeric: NumericSum,
    /// interval inputs' sum (sum and avg of interval), field by field.
    interval: snapscale_values::Interval,
    /// The statistics' state for integer and numeric inputs.
    variance: NumericVariance,
    /// The statistics' state for float inputs: PostgreSQL's Youngs-Cramer
    /// sum of squared deviations (with `float_sum` and `count`), which
    /// gives its results to the last bit.
    float_sxx: f64,
    /// json_agg's and the other json aggregates' state.
    json: Option<JsonState>,
    extreme: Option<Value>,
    /// array_agg's values, string_agg's text.
    items: Vec<Value>,
    text: Option<String>,
    /// `agg(x ORDER BY …)`: each row's sort keys, value and delimiter,
    /// fed in order when the group is complete.
    deferred: Vec<(Vec<Value>, Value, Option<Value>)>,
    /// A user-defined aggregate's state (exec/user_agg.rs).
    pub(super) user: Option<Box<super::user_agg::UserState>>,
    /// A user-defined aggregate's rows kept for ORDER BY or DISTINCT:
    /// each row's sort keys and arguments.
    pub(super) user_rows: Vec<(Vec<Value>, Vec<Value>)>,
}

impl Acc {
    /// Keeps a row's value for an ordered aggregate.
    pub(super) fn defer(&mut self, keys: Vec<Value>, v: Value, delimiter: Option<Value>) {
        self.deferred.push((keys, v, delimiter));
    }

    /// The values kept by `defer`.
    pub(super) fn take_deferred(&mut self) -> Vec<(Vec<Value>, Value, Option<Value>)> {
        std::mem::take(&mut self.deferred)
    }

    /// Adds a row's value to count, sum or avg, borrowed (a column's value
    /// is read where it is, not copied per row); false for another
    /// aggregate, which [`Acc::add`] takes.
    pub(super) fn add_counted(&mut self, func: AggFunc, v: &Value) -> Result<bool, SqlError> {
        if !matches!(func, AggFunc::CountStar | AggFunc::Count | AggFunc::Sum | AggFunc::Avg) {
            return Ok(false);
        }
        if matches!(v, Value::Null) {
            return Ok(true);
        }
        self.count += 1;
        if matches!(func, AggFunc::Sum | AggFunc::Avg) {
            self.sum(v)?;
        }
        Ok(true)
    }

    /// sum's and avg's running sums, in the input's kind.
    fn sum(&mut self, v: &Value) -> Result<(), SqlError> {
        match v {
            Value::Int(i) => {
                self.int_sum += i128::from(*i);
                self.float_sum += *i as f64;
            }
            Value::Float(f) => self.float_sum += f,
            Value::Float4(f) => {
                self.float4_sum += f;
                self.float_sum += f64::from(*f);
            }
            Value::Numeric(n) => self.numeric.add(n),
            Value::Interval(i) => self.interval = self.interval.add(*i, false)?,
            _ => {}
        }
        Ok(())
    }

    /// Adds a row's value (and string_agg's delimiter for it).
    pub(super) fn add(&mut self, func: AggFunc, v: Value, delimiter: Option<Value>) -> Result<(), SqlError> {
        if func == AggFunc::User {
            return Err(user_aggregate_here());
        }
        if func == AggFunc::ArrayAgg {
            self.count += 1;
            self.items.push(v);
            return Ok(());
        }
        if func == AggFunc::ArrayAggArray {
            snapscale_values::array::ops::check_stackable(self.items.first(), &v)?;
            self.count += 1;
            self.items.push(v);
            return Ok(());
        }
        if matches!(
            func,
            AggFunc::JsonAgg | AggFunc::JsonbAgg | AggFunc::JsonObjectAgg | AggFunc::JsonbObjectAgg
        ) {
            self.count += 1;
            return self.json_add(func, &v, delimiter.as_ref());
        }
        if matches!(v, Value::Null) {
            return Ok(());
        }
        self.count += 1;
        match func {
            AggFunc::CountStar | AggFunc::Count => {}
            AggFunc::Sum | AggFunc::Avg => self.sum(&v)?,
            AggFunc::VarSamp | AggFunc::VarPop | AggFunc::StddevSamp | AggFunc::StddevPop => match v {
                Value::Int(i) => self.variance.add_i64(i),
                Value::Numeric(n) => self.variance.add(&n),
                Value::Float(f) => self.float_accum(f)?,
                Value::Float4(f) => self.float_accum(f64::from(f))?,
                _ => {}
            },
            AggFunc::StringAgg => {
                let piece = v.to_text().unwrap_or_default();
                match &mut self.text {
                    None => self.text = Some(piece),
                    Some(t) => {
                        if let Some(Value::Text(d)) = delimiter {
                            t.push_str(&d);
                        }
                        t.push_str(&piece);
                    }
                }
            }
            AggFunc::User
            | AggFunc::ArrayAgg
            | AggFunc::ArrayAggArray
            | AggFunc::JsonAgg
            | AggFunc::JsonbAgg
            | AggFunc::JsonObjectAgg
            | AggFunc::JsonbObjectAgg => unreachable!("handled above"),
            AggFunc::BoolAnd | AggFunc::BoolOr => {
                let b = matches!(v, Value::Bool(true));
                let acc = matches!(self.extreme, Some(Value::Bool(true)));
                let next = match (&self.extreme, func) {
                    (None, _) => b,
                    (_, AggFunc::BoolAnd) => acc && b,
                    _ => acc || b,
                };
                self.extreme = Some(Value::Bool(next));
            }
            AggFunc::Min | AggFunc::Max => {
                let replace = match &self.extreme {
                    None => true,
                    Some(cur) => {
                        let o = compare(&v, cur, false)?;
                        if func == AggFunc::Min {
                            o.is_lt()
                        } else {
                            o.is_gt()
                        }
                    }
                };
                if replace {
                    self.extreme = Some(v);
                }
            }
        }
        Ok(())
    }

    /// The aggregate's value so far (a window's running aggregate).
    pub(super) fn snapshot(&self, func: AggFunc, ty: SqlType) -> Result<Value, SqlError> {
        Acc {
            count: self.count,
            int_sum: self.int_sum,
            float_sum: self.float_sum,
            float4_sum: self.float4_sum,
            numeric: self.numeric.clone(),
            interval: self.interval,
            variance: self.variance.clone(),
            float_sxx: self.float_sxx,
            json: self.json.clone(),
            extreme: self.extreme.clone(),
            items: self.items.clone(),
            text: self.text.clone(),
            // A window's aggregates are never ordered within (refused at
            // bind time).
            deferred: Vec::new(),
            user: None,
            user_rows: Vec::new(),
        }
        .finish(func, ty)
    }

    pub(super) fn finish(self, func: AggFunc, ty: SqlType) -> Result<Value, SqlError> {
        Ok(match func {
            AggFunc::User => return Err(user_aggregate_here()),
            AggFunc::CountStar | AggFunc::Count => Value::Int(self.count),
            _ if self.count == 0 => Value::Null,
            AggFunc::Sum if ty == SqlType::Int8 => {
                Value::Int(i64::try_from(self.int_sum).map_err(|_| SqlError::out_of_range("bigint"))?)
            }
            AggFunc::Sum | AggFunc::Avg if matches!(ty, SqlType::Numeric(_)) => {
                Value::Numeric(self.numeric_sum_or_avg(func)?)
            }
            AggFunc::Sum if ty == SqlType::Interval => Value::Interval(self.interval),
            AggFunc::Avg if ty == SqlType::Interval => {
                Value::Interval(self.interval.div_f64(self.count as f64)?)
            }
            AggFunc::Sum if ty == SqlType::Float4 => Value::Float4(self.float4_sum),
            AggFunc::Sum => Value::Float(self.float_sum),
            AggFunc::Avg => Value::Float(self.float_sum / self.count as f64),
            AggFunc::VarSamp | AggFunc::VarPop | AggFunc::StddevSamp | AggFunc::StddevPop
                if matches!(ty, SqlType::Numeric(_)) =>
            {
                let v = match func {
                    AggFunc::VarSamp => self.variance.var_samp()?,
                    AggFunc::VarPop => self.variance.var_pop()?,
                    AggFunc::StddevSamp => self.variance.stddev_samp()?,
                    _ => self.variance.stddev_pop()?,
                };
                v.map_or(Value::Null, Value::Numeric)
            }
            AggFunc::VarSamp | AggFunc::VarPop | AggFunc::StddevSamp | AggFunc::StddevPop => {
                self.float_statistic(func)
            }
            AggFunc::Min | AggFunc::Max | AggFunc::BoolAnd | AggFunc::BoolOr => {
                self.extreme.unwrap_or(Value::Null)
            }
            AggFunc::StringAgg => self.text.map_or(Value::Null, Value::Text),
            AggFunc::JsonAgg | AggFunc::JsonbAgg | AggFunc::JsonObjectAgg | AggFunc::JsonbObjectAgg => {
                self.json_finish()
            }
            AggFunc::ArrayAgg => Value::array(self.items),
            AggFunc::ArrayAggArray if self.items.is_empty() => Value::Null,
            AggFunc::ArrayAggArray => {
                Value::Array(std::sync::Arc::new(snapscale_values::array::ops::construct(&self.items)?))
            }
        })
    }
}

impl Acc {
    /// sum or avg finished as numeric: of numeric inputs from their
    /// state, of integers from their exact sum (avg divides as numeric
    /// division does, PostgreSQL's int8_avg).
    fn numeric_sum_or_avg(&self, func: AggFunc) -> Result<Numeric, SqlError> {
        if self.numeric.count() > 0 {
            let r = if func == AggFunc::Sum { self.numeric.sum()? } else { self.numeric.avg()? };
            return Ok(r.unwrap_or(Numeric::NAN));
        }
        let sum = Numeric::parse(&self.int_sum.to_string())?;
        if func == AggFunc::Sum {
            Ok(sum)
        } else {
            sum.div(&Numeric::from(self.count))
        }
    }

    /// One float input of a statistic: PostgreSQL's float8_accum, whose
    /// update keeps the sum of squared deviations directly (Youngs and
    /// Cramer), so that large offsets do not cancel.
    fn float_accum(&mut self, x: f64) -> Result<(), SqlError> {
        // `count` already includes this input.
        let (n, before) = (self.count as f64, self.float_sum);
        self.float_sum += x;
        if n > 1.0 {
            let d = x * n - self.float_sum;
            self.float_sxx += d * d / (n * (n - 1.0));
            if self.float_sum.is_infinite() || self.float_sxx.is_infinite() {
                if !before.is_infinite() && !x.is_infinite() {
                    return Err(SqlError::new(
                        SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
                        "value out of range: overflow",
                    ));
                }
                self.float_sxx = f64::NAN;
            }
        } else if !x.is_finite() {
            self.float_sxx = f64::NAN;
        }
        Ok(())
    }

    /// var_samp / var_pop / stddev_samp / stddev_pop of float inputs:
    /// NULL for too few rows (fewer than two for the sample forms).
    fn float_statistic(&self, func: AggFunc) -> Value {
        let n = self.count as f64;
        let sample = matches!(func, AggFunc::VarSamp | AggFunc::StddevSamp);
        if sample && self.count < 2 {
            return Value::Null;
        }
        let var = self.float_sxx / if sample { n - 1.0 } else { n };
        Value::Float(if matches!(func, AggFunc::StddevSamp | AggFunc::StddevPop) { var.sqrt() } else { var })
    }
}

impl Acc {
    /// A row of a json aggregate: the value (and the object aggregates'
    /// value for key `v`). Values become json as the builders make them;
    /// a timestamptz is written in UTC (the aggregate sees no session).
    fn json_add(&mut self, func: AggFunc, v: &Value, value: Option<&Value>) -> Result<(), SqlError> {
        use crate::expr::scalar::json_input;
        let zone = snapscale_values::Zone::UTC;
        let state = self.json.get_or_insert_with(|| match func {
            AggFunc::JsonAgg => JsonState::Json(JsonAgg::new()),
            AggFunc::JsonbAgg => JsonState::Jsonb(JsonbAgg::new()),
            AggFunc::JsonObjectAgg => JsonState::JsonObject(JsonObjectAgg::new()),
            _ => JsonState::JsonbObject(JsonbObjectAgg::new()),
        });
        let input = json_input(v, zone)?;
        let second = || json_input(value.unwrap_or(&Value::Null), zone);
        match state {
            JsonState::Json(a) => a.add(&input),
            JsonState::Jsonb(a) => a.add(&input)?,
            JsonState::JsonObject(a) => a.add(&input, &second()?)?,
            JsonState::JsonbObject(a) => a.add(&input, &second()?)?,
        }
        Ok(())
    }

    fn json_finish(&self) -> Value {
        match &self.json {
            None => Value::Null,
            Some(JsonState::Json(a)) => a.finish().map_or(Value::Null, |t| Value::Json(t.into())),
            Some(JsonState::Jsonb(a)) => a.finish().map_or(Value::Null, Value::Jsonb),
            Some(JsonState::JsonObject(a)) => a.finish().map_or(Value::Null, |t| Value::Json(t.into())),
            Some(JsonState::JsonbObject(a)) => a.finish().map_or(Value::Null, Value::Jsonb),
        }
    }
}

/// A user-defined aggregate reached the built-in ones' state (its own is
/// exec/user_agg.rs).
fn user_aggregate_here() -> SqlError {
    SqlError::new(SqlState::INTERNAL_ERROR, "a user-defined aggregate computed as a built-in one")
}
