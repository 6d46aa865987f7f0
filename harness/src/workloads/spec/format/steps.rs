//! The steps of one iteration: launches, their arguments, and host loops over launches.

use toml::Spanned;

use super::{
    element, ArgSpec, BufferLookup, Ctx, LaunchSpec, LoopSpec, RawLoop, RawStep, SearchSpec, Slots,
    Step, WalkSpec, MAX_LOOP_DEPTH,
};
use crate::workloads::spec::compiled::{Code, Scope};
use crate::workloads::spec::params::{is_identifier, RESERVED};
use crate::workloads::{Access, WorkloadError};

pub(super) struct StepBuilder<'a, 'b> {
    pub(super) ctx: &'a Ctx<'b>,
    pub(super) find: &'a BufferLookup<'a>,
    pub(super) slots: &'a mut Slots,
}

impl StepBuilder<'_, '_> {
    pub(super) fn steps(
        &mut self,
        raw: &[RawStep],
        path: &str,
        scope: &Scope,
        depth: usize,
    ) -> Result<Vec<Step>, WorkloadError> {
        raw.iter()
            .enumerate()
            .map(|(i, s)| self.step(s, &format!("{path}[{i}]"), scope, depth))
            .collect()
    }

    fn step(
        &mut self,
        s: &RawStep,
        path: &str,
        scope: &Scope,
        depth: usize,
    ) -> Result<Step, WorkloadError> {
        let ctx = self.ctx;
        let field = |f: &str| format!("{path}.{f}");
        if let Some(body) = &s.body {
            let Some(lp) = &s.host_loop else {
                return Err(ctx.err_no_line(
                    &field("body"),
                    "a body belongs to a loop: add loop = { var = \"k\", from = \"…\", to = \"…\" }",
                ));
            };
            if let Some(k) = &s.kernel {
                return Err(ctx.err(
                    &k.span(),
                    &field("kernel"),
                    "a loop with a body holds its launches in the body; move the kernel into a body entry",
                ));
            }
            if s.global.is_some()
                || s.local.is_some()
                || !s.args.is_empty()
                || s.bytes.is_some()
                || s.flops.is_some()
                || s.access.is_some()
                || s.gathers.is_some()
                || s.searches.is_some()
                || s.walks.is_some()
            {
                return Err(ctx.err(
                    &lp.var.span(),
                    path,
                    "a loop with a body takes no global, local, args, bytes, flops, access, gathers, searches or walks of its own",
                ));
            }
            if body.is_empty() {
                return Err(ctx.err(&lp.var.span(), &field("body"), "an empty body"));
            }
            return self.host_loop(lp, path, scope, depth, |b, inner| {
                b.steps(body, &field("body"), inner, depth + 1)
            });
        }
        let launch_scope = scope.clone();
        match &s.host_loop {
            None => Ok(Step::Launch(self.launch(s, path, &launch_scope)?)),
            Some(lp) => self.host_loop(lp, path, scope, depth, |b, inner| {
                Ok(vec![Step::Launch(b.launch(s, path, inner)?)])
            }),
        }
    }

    fn host_loop(
        &mut self,
        lp: &RawLoop,
        path: &str,
        scope: &Scope,
        depth: usize,
        body: impl FnOnce(&mut Self, &Scope) -> Result<Vec<Step>, WorkloadError>,
    ) -> Result<Step, WorkloadError> {
        let ctx = self.ctx;
        let field = |f: &str| format!("{path}.loop.{f}");
        if depth >= MAX_LOOP_DEPTH {
            return Err(ctx.err(
                &lp.var.span(),
                &field("var"),
                format!("loops nested more than {MAX_LOOP_DEPTH} deep"),
            ));
        }
        let var = lp.var.get_ref();
        if !is_identifier(var) {
            return Err(ctx.err(
                &lp.var.span(),
                &field("var"),
                format!(
                    "'{}' is not a variable name (a letter or _, then letters, digits or _)",
                    var.chars().take(40).collect::<String>()
                ),
            ));
        }
        if scope.slot(var).is_some() || RESERVED.contains(&var.as_str()) {
            return Err(ctx.err(
                &lp.var.span(),
                &field("var"),
                format!(
                    "'{var}' is already a name here ({}); pick another",
                    scope.names()
                ),
            ));
        }
        let from = ctx.code(&lp.from, &field("from"), scope)?;
        let to = ctx.code(&lp.to, &field("to"), scope)?;
        let step = match &lp.step {
            Some(s) => ctx.code(s, &field("step"), scope)?,
            None => Code::Num(1.0),
        };
        let slot = self.slots.total;
        self.slots.total += 1;
        let inner = scope.with_var(var, slot);
        let body = body(self, &inner)?;
        Ok(Step::Loop(LoopSpec {
            var: var.clone(),
            slot,
            from,
            to,
            step,
            body,
        }))
    }

    fn launch(
        &mut self,
        l: &RawStep,
        path: &str,
        scope: &Scope,
    ) -> Result<LaunchSpec, WorkloadError> {
        let ctx = self.ctx;
        let field = |f: &str| format!("{path}.{f}");
        let Some(kernel) = &l.kernel else {
            let message = "missing: a launch names its kernel (or, for a loop over several launches, give loop and body)";
            let near = l
                .global
                .iter()
                .chain(l.local.iter())
                .flatten()
                .chain(l.args.iter())
                .next();
            return Err(match near {
                Some(s) => ctx.err(&s.span(), &field("kernel"), message),
                None => ctx.err_no_line(&field("kernel"), message),
            });
        };
        if !is_identifier(kernel.get_ref()) {
            return Err(ctx.err(
                &kernel.span(),
                &field("kernel"),
                format!(
                    "{:?} is not a kernel name: letters, digits and _, not starting with a digit, as in the kernel file",
                    kernel.get_ref()
                ),
            ));
        }
        let Some(global) = &l.global else {
            return Err(ctx.err(
                &kernel.span(),
                &field("global"),
                "missing: give 1, 2 or 3 sizes",
            ));
        };
        if global.is_empty() || global.len() > 3 {
            return Err(ctx.err(&kernel.span(), &field("global"), "give 1, 2 or 3 sizes"));
        }
        if let Some(local) = &l.local {
            if local.len() != global.len() {
                return Err(ctx.err(
                    &kernel.span(),
                    &field("local"),
                    "needs as many sizes as global",
                ));
            }
        }
        let codes = |v: &[Spanned<String>], f: &str| {
            v.iter()
                .map(|s| ctx.code(s, &field(f), scope))
                .collect::<Result<Vec<_>, _>>()
        };
        let args = l
            .args
            .iter()
            .enumerate()
            .map(|(j, a)| arg(ctx, a, &field(&format!("args[{j}]")), self.find, scope))
            .collect::<Result<Vec<_>, _>>()?;
        let access = l
            .access
            .as_ref()
            .map(|a| {
                Access::parse(a.get_ref()).ok_or_else(|| {
                    ctx.err(
                        &a.span(),
                        &field("access"),
                        format!(
                            "{:?} is not an access pattern: one of {}",
                            a.get_ref().chars().take(40).collect::<String>(),
                            Access::NAMES.join(", ")
                        ),
                    )
                })
            })
            .transpose()?;
        let gathers = match &l.gathers {
            None => Vec::new(),
            Some(table) => self.gathers(table, &field("gathers"), scope, &args)?,
        };
        let searches = match &l.searches {
            None => Vec::new(),
            Some(table) => self.searches(table, &field("searches"), scope, &args)?,
        };
        let walks = match &l.walks {
            None => Vec::new(),
            Some(table) => self.walks(table, &field("walks"), scope, &args)?,
        };
        Ok(LaunchSpec {
            kernel: kernel.get_ref().clone(),
            global: codes(global, "global")?,
            local: l.local.as_deref().map(|v| codes(v, "local")).transpose()?,
            args,
            bytes: l
                .bytes
                .as_ref()
                .map(|b| ctx.code(b, &field("bytes"), scope))
                .transpose()?,
            flops: l
                .flops
                .as_ref()
                .map(|f| ctx.code(f, &field("flops"), scope))
                .transpose()?,
            access,
            gathers,
            searches,
            walks,
        })
    }

    /// A launch's `walks = { A = { stride = "M", steps = "K" } }`: each named buffer, one of
    /// the launch's `args`, read by every work item `steps` times, `stride` elements apart.
    fn walks(
        &self,
        table: &Spanned<toml::Table>,
        field: &str,
        scope: &Scope,
        args: &[ArgSpec],
    ) -> Result<Vec<WalkSpec>, WorkloadError> {
        let ctx = self.ctx;
        const FORM: &str =
            "give each walked buffer a table, as { A = { stride = \"M\", steps = \"K\" } }";
        if table.get_ref().is_empty() {
            return Err(ctx.err(&table.span(), field, format!("an empty table: {FORM}")));
        }
        table
            .get_ref()
            .iter()
            .map(|(name, value)| {
                let at = format!("{field}.{name}");
                let toml::Value::Table(t) = value else {
                    return Err(ctx.err(&table.span(), &at, FORM));
                };
                if let Some(k) = t.keys().find(|k| *k != "stride" && *k != "steps") {
                    return Err(ctx.err(
                        &table.span(),
                        &format!("{at}.{k}"),
                        "unknown key: a walk takes stride and steps",
                    ));
                }
                let code = |k: &str| {
                    let Some(toml::Value::String(text)) = t.get(k) else {
                        return Err(ctx.err(
                            &table.span(),
                            &format!("{at}.{k}"),
                            "give it as an expression in quotes (a walk takes both stride and steps)",
                        ));
                    };
                    ctx.code(
                        &Spanned::new(table.span(), text.clone()),
                        &format!("{at}.{k}"),
                        scope,
                    )
                };
                let (stride, steps) = (code("stride")?, code("steps")?);
                Ok(WalkSpec {
                    buffer: self.passed_buffer(table, &at, name, args)?,
                    stride,
                    steps,
                })
            })
            .collect()
    }

    /// A launch's `searches = { a = "1" }` or `{ grid = { arrays = "NUC", stride = "6" } }`:
    /// each named buffer, one of the launch's `args`, holds `arrays` sorted arrays side by
    /// side (1 unless said), their keys `stride` elements apart (1 unless said), each
    /// binary-searched by the launch's work items.
    fn searches(
        &self,
        table: &Spanned<toml::Table>,
        field: &str,
        scope: &Scope,
        args: &[ArgSpec],
    ) -> Result<Vec<SearchSpec>, WorkloadError> {
        let ctx = self.ctx;
        const FORM: &str =
            "give the sorted arrays the buffer holds in quotes, as { a = \"1\" }, or a table, as { grid = { arrays = \"NUC\", stride = \"6\" } }";
        if table.get_ref().is_empty() {
            return Err(ctx.err(&table.span(), field, format!("an empty table: {FORM}")));
        }
        table
            .get_ref()
            .iter()
            .map(|(name, value)| {
                let at = format!("{field}.{name}");
                let (arrays, stride) = match value {
                    toml::Value::String(a) => (a.clone(), "1".to_string()),
                    toml::Value::Table(t) => {
                        if let Some(k) = t.keys().find(|k| *k != "arrays" && *k != "stride") {
                            return Err(ctx.err(
                                &table.span(),
                                &format!("{at}.{k}"),
                                "unknown key: a search takes arrays and stride",
                            ));
                        }
                        let expr = |k: &str| match t.get(k) {
                            None => Ok("1".to_string()),
                            Some(toml::Value::String(s)) => Ok(s.clone()),
                            Some(_) => Err(ctx.err(
                                &table.span(),
                                &format!("{at}.{k}"),
                                "give it as an expression in quotes",
                            )),
                        };
                        (expr("arrays")?, expr("stride")?)
                    }
                    _ => return Err(ctx.err(&table.span(), &at, FORM)),
                };
                let buffer = self.passed_buffer(table, &at, name, args)?;
                let code = |text: String, key: &str| {
                    ctx.code(
                        &Spanned::new(table.span(), text),
                        &format!("{at}.{key}"),
                        scope,
                    )
                };
                Ok(SearchSpec {
                    buffer,
                    arrays: code(arrays, "arrays")?,
                    stride: code(stride, "stride")?,
                })
            })
            .collect()
    }

    /// The buffer `name` that a launch's table (`gathers`, `searches`) names at `at`, which
    /// must be one of the launch's `args`.
    fn passed_buffer(
        &self,
        table: &Spanned<toml::Table>,
        at: &str,
        name: &str,
        args: &[ArgSpec],
    ) -> Result<usize, WorkloadError> {
        let buffer = (self.find)(&Spanned::new(table.span(), name.to_string()), at)?;
        if !args
            .iter()
            .any(|a| matches!(a, ArgSpec::Buffer(i) if *i == buffer))
        {
            return Err(self.ctx.err(
                &table.span(),
                at,
                format!("the launch does not pass buffer '{name}': add \"buf:{name}\" to its args"),
            ));
        }
        Ok(buffer)
    }

    /// A launch's `gathers = { x = "NNZ" }`: each named buffer, which must be one of the
    /// launch's `args`, and how many of its elements the launch reads at indices another
    /// array holds.
    fn gathers(
        &self,
        table: &Spanned<toml::Table>,
        field: &str,
        scope: &Scope,
        args: &[ArgSpec],
    ) -> Result<Vec<(usize, Code)>, WorkloadError> {
        let ctx = self.ctx;
        if table.get_ref().is_empty() {
            return Err(ctx.err(
                &table.span(),
                field,
                "an empty table: name each gathered buffer and its reads, as { x = \"NNZ\" }",
            ));
        }
        table
            .get_ref()
            .iter()
            .map(|(name, reads)| {
                let at = format!("{field}.{name}");
                let Some(reads) = reads.as_str() else {
                    return Err(ctx.err(
                        &table.span(),
                        &at,
                        "give the reads as an expression in quotes, as { x = \"NNZ\" }",
                    ));
                };
                let buffer = self.passed_buffer(table, &at, name, args)?;
                let reads = Spanned::new(table.span(), reads.to_string());
                Ok((buffer, ctx.code(&reads, &at, scope)?))
            })
            .collect()
    }
}

fn arg(
    ctx: &Ctx<'_>,
    a: &Spanned<String>,
    field: &str,
    find: &BufferLookup<'_>,
    scope: &Scope,
) -> Result<ArgSpec, WorkloadError> {
    let Some((kind, rest)) = a.get_ref().split_once(':') else {
        return Err(ctx.err(
            &a.span(),
            field,
            format!(
                "'{}': write buf:NAME, f32:EXPR, f64:EXPR, u32:EXPR or i32:EXPR",
                a.get_ref()
            ),
        ));
    };
    let rest_spanned = Spanned::new(a.span(), rest.trim().to_string());
    if kind.trim() == "buf" {
        return Ok(ArgSpec::Buffer(find(&rest_spanned, field)?));
    }
    let kind_spanned = Spanned::new(a.span(), kind.trim().to_string());
    Ok(ArgSpec::Scalar(
        element(ctx, &kind_spanned, field)?,
        ctx.code(&rest_spanned, field, scope)?,
    ))
}
