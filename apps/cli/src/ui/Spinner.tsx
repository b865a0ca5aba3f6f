/**
 * A frame-based spinner with a label, shown while the model or the runtime works.
 */
import { Text } from 'ink'
import { useEffect, useState } from 'react'

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'] as const

/**
 * Spins every 80 ms until unmounted.
 * @category constructors
 */
export const Spinner = ({ label }: { readonly label: string }) => {
  const [frame, setFrame] = useState(0)
  useEffect(() => {
    const timer = setInterval(() => setFrame((f) => (f + 1) % FRAMES.length), 80)
    return () => clearInterval(timer)
  }, [])
  return (
    <Text color="cyan">
      {FRAMES[frame]} <Text dimColor>{label}</Text>
    </Text>
  )
}
