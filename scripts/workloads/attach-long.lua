-- A long-running lua5.4 script for attaching to (scripts/attach-corpus.sh): rounds of
-- recursion, table work, string work, coroutines and errors caught by pcall (the last two
-- leave C frames by longjmp inside lua5.4), until killed or TOTAL rounds are done. Prints a
-- line every ROUNDS rounds, and "end SUM" after TOTAL rounds.
--   usage: lua5.4 attach-long.lua [ROUNDS [TOTAL]]
local every = tonumber(arg and arg[1]) or 50
local total = tonumber(arg and arg[2])

local function fib(n)
  if n < 2 then return n end
  return fib(n - 1) + fib(n - 2)
end

local function tables(n)
  local t = {}
  for i = 1, n do t[i] = (i * 7919) % 1000 end
  table.sort(t)
  local s = 0
  for k, v in pairs(t) do s = s + k * v end
  return s
end

local function strings(n)
  local parts = {}
  for i = 1, n do parts[#parts + 1] = string.format("%d:%s", i, string.rep("x", i % 7)) end
  local s = table.concat(parts, ",")
  return #s:gsub("x+", "y")
end

local function pipeline(n)
  local co = coroutine.wrap(function()
    for i = 1, n do coroutine.yield(i * i) end
  end)
  local s = 0
  for _ = 1, n do s = s + co() end
  return s
end

local function failing(n)
  local ok = 0
  for i = 1, n do
    if not pcall(function() if i % 2 == 0 then error("even") end return i end) then
      ok = ok + 1
    end
  end
  return ok
end

local round, sum = 0, 0
while true do
  round = round + 1
  sum = (sum + fib(15) + tables(300) + strings(100) + pipeline(50) + failing(20)) % 1000003
  if round % every == 0 then
    io.write("round ", round, " ", sum, "\n")
    io.flush()
  end
  if total and round >= total then
    io.write("end ", sum, "\n")
    break
  end
end
