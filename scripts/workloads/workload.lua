-- Corpus workload for lua5.4: recursion (fib), table inserts/removes and table.sort (default
-- order and with a comparator), string operations (gsub, format, concatenation, find, rep,
-- byte/char, upper), a closure-heavy loop and a small coroutine pipeline.
--   usage: lua5.4 workload.lua SIZE     (work grows about linearly with SIZE)
-- Deterministic: no clock, no math.random, no os.time, no tables keyed by tables or userdata
-- (their hashes are addresses), no tostring() of tables or functions. Pair it with a lua5.4
-- built with -D'luai_makeseed(L)=0' -D'l_randomizePivot()=(~0u)' (scripts/corpus.sh).
-- Prints one checksum line, identical between runs, natively and under valgrind.

local size = tonumber(arg and arg[1]) or 10
assert(size >= 1, "SIZE must be >= 1")

-- A fixed-seed linear congruential generator (integer arithmetic, 64-bit wrap is fine).
local seed = 12345
local function rand(n)
  seed = (seed * 6364136223846793005 + 1442695040888963407) & 0x7fffffffffffffff
  return (seed >> 33) % n
end

local checksum = 0
local function mix(v)
  checksum = (checksum * 31 + v) & 0xffffffff
end

-- 1. Recursion.
local function fib(n)
  if n < 2 then return n end
  return fib(n - 1) + fib(n - 2)
end
for _ = 1, size do mix(fib(18)) end

-- 2. Tables: inserts, removes, sorts.
local words = { "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta",
  "iota", "kappa", "lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau" }
for round = 1, size do
  local t = {}
  for i = 1, 2000 do
    t[#t + 1] = rand(100000)
    if i % 7 == 0 then table.insert(t, 1, i) end
    if i % 11 == 0 then table.remove(t) end
  end
  table.sort(t)
  mix(t[1]); mix(t[#t]); mix(t[#t // 2])
  local recs = {}
  for i = 1, 800 do
    recs[i] = { name = words[rand(#words) + 1] .. rand(1000), score = rand(5000), id = i }
  end
  table.sort(recs, function(a, b)
    if a.score ~= b.score then return a.score > b.score end
    return a.id < b.id
  end)
  mix(recs[1].id); mix(recs[800].score)
  -- A string-keyed table (hashes come from the fixed seed) and its traversal.
  local counts = {}
  for i = 1, #recs do
    local k = recs[i].name:sub(1, 3)
    counts[k] = (counts[k] or 0) + 1
  end
  local keys = {}
  for k in pairs(counts) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do mix(counts[k]) end
  mix(round)
end

-- 3. Strings.
for round = 1, size do
  local parts = {}
  for i = 1, 600 do
    parts[#parts + 1] = string.format("%s-%05d:%x %.3f|", words[i % #words + 1], rand(99999), i * 7, i / 7)
  end
  local s = table.concat(parts)
  local n
  s, n = s:gsub("%d+", function(d) return #d end)
  mix(n)
  s, n = s:gsub("(%a+)%-", "%1_")
  mix(n)
  s = s:upper()
  local pos, cnt = 1, 0
  while true do
    local a, b = s:find("ALPHA", pos, true)
    if not a then break end
    cnt = cnt + 1
    pos = b + 1
  end
  mix(cnt)
  local acc = ""
  for i = 1, 300 do
    acc = acc .. string.char(65 + i % 26)
    if #acc > 64 then acc = acc:sub(17) end
  end
  mix(#acc); mix(acc:byte(1))
  local rep = string.rep("ab", 100, ",")
  mix(select(2, rep:gsub(",", ",")))
  for w in s:gmatch("[^|]+") do
    if #w > 20 then mix(#w) end
  end
  mix(round)
end

-- 4. Closures, varargs and a coroutine pipeline.
local function counter()
  local c = 0
  return function(...) c = c + select("#", ...); return c end
end
for _ = 1, size do
  local f = counter()
  for i = 1, 3000 do f(i, i + 1, i % 3) end
  mix(f())
  local gen = coroutine.wrap(function()
    for i = 1, 2000 do coroutine.yield(i * i % 1009) end
  end)
  local sum = 0
  for _ = 1, 2000 do sum = sum + gen() end
  mix(sum)
end

print(string.format("workload.lua size=%d checksum=%08x", size, checksum))
