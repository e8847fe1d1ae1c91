// Helpers of the cbwatch mixin. Written by hand; src/tools/alert-config.ts does the same in TypeScript for
// `cbwatch rules`, and test/mixin/mixin.test.ts checks that both give the same rules.
{
  local units = { s: 'second', m: 'minute', h: 'hour', d: 'day', w: 'week', y: 'year' },
  local isDigits(s) = std.length(s) > 0 && std.length([ch for ch in std.stringChars(s) if !std.member('0123456789', ch)]) == 0,

  // A duration in words as the annotations write it: '15m' -> '15 minutes', '1h' -> 'an hour'; other forms unchanged.
  humanDuration(d)::
    local n = std.length(d);
    local unit = if n >= 2 then std.substr(d, n - 1, 1) else '';
    local num = if n >= 2 then std.substr(d, 0, n - 1) else '';
    if std.objectHas(units, unit) && isDigits(num) then
      (if num == '1' then (if unit == 'h' then 'an hour' else 'a ' + units[unit]) else num + ' ' + units[unit] + 's')
    else d,

  // Numbers as JavaScript prints them, for the values thresholds take: integers in full, other numbers with the
  // fewest significant digits that read back as the same number (jsonnet's own %s prints 17 digits).
  formatNumber(x)::
    if x == std.floor(x) && std.abs(x) < 1e15 then std.toString(x)
    else
      local tries = [std.format('%.' + p + 'g', [x]) for p in std.range(1, 17)];
      local exact = [t for t in tries if std.parseJson(t) == x];
      if std.length(exact) > 0 then exact[0] else std.toString(x),

  // The values a rule template of `alert` is formatted with (null: a recording rule, selectors only).
  values(c, alert)::
    local sel = c.selector;
    local base = {
      sel: sel,
      selComma: if sel == '' then '' else ', ' + sel,
      selBraces: if sel == '' then '' else '{' + sel + '}',
      exporterJobSelector: c.exporterJobSelector,
      runbookUrlBase: c.runbookUrlBase,
    };
    if alert == null then base
    else
      local a = c.alerts[alert];
      base
      + { [k]: if std.isNumber(a[k]) then $.formatNumber(a[k]) else std.toString(a[k]) for k in std.objectFields(a) }
      + { [k + 'Human']: $.humanDuration(a[k]) for k in std.objectFields(a) if std.isString(a[k]) },

  // Groups whose every rule is disabled are left out, as `cbwatch rules` does.
  nonEmptyGroups(groups):: [g for g in groups if std.length(g.rules) > 0],
}
