-- A small program whose eventlog (+RTS -l -hT) holds GCs, heap samples
-- and a user marker: the capture tests' eventlog fixture.
import Debug.Trace (traceMarkerIO)
import qualified Data.Map.Strict as M

main :: IO ()
main = do
  traceMarkerIO "start"
  let m = M.fromList [(i, show i) | i <- [1 .. 300000 :: Int]]
  print (M.size m, sum (map length (M.elems m)))
  traceMarkerIO "end"
