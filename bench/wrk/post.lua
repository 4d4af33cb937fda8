-- POST load for wrk (bench/load.ts): the body template (first script argument) has every
-- "{{unique}}" replaced by a value unique in the whole run: the run's prefix (second argument),
-- the thread and a counter, so that every request creates a new record (unique emails).
dofile("bench/wrk/report.lua")

local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("thread_number", threads)
end

local template, prefix
local counter = 0
function init(args)
  template = args[1]
  prefix = args[2] .. "t" .. thread_number
end

function request()
  counter = counter + 1
  local body = string.gsub(template, "{{unique}}", prefix .. "n" .. counter)
  return wrk.format("POST", nil, nil, body)
end

