/**
 * A one-question list prompt on the terminal (ink-select-input): the person moves with the arrows
 * and picks with Enter; Esc or Ctrl+C leaves without a choice. Loaded only by `maka resume --pick`.
 */
import { Box, Text, render, useApp, useInput } from 'ink'
import SelectInput from 'ink-select-input'

/**
 * One choice of the list.
 * @category models
 */
export interface PickItem {
  readonly label: string
  readonly value: string
}

const Pick = (props: {
  readonly question: string
  readonly items: ReadonlyArray<PickItem>
  readonly onDone: (value: string | null) => void
}) => {
  const { exit } = useApp()
  useInput((_input, key) => {
    if (key.escape) {
      props.onDone(null)
      exit()
    }
  })
  return (
    <Box flexDirection="column">
      <Text bold>{props.question}</Text>
      <SelectInput
        items={props.items.map((item) => ({ key: item.value, label: item.label, value: item.value }))}
        onSelect={(item) => {
          props.onDone(item.value)
          exit()
        }}
      />
    </Box>
  )
}

/**
 * Asks the question and resolves with the picked value, or null when the person left.
 * @category constructors
 */
export const pickOne = async (items: ReadonlyArray<PickItem>, question: string): Promise<string | null> => {
  let picked: string | null = null
  const instance = render(
    <Pick
      question={question}
      items={items}
      onDone={(value) => {
        picked = value
      }}
    />,
  )
  await instance.waitUntilExit()
  return picked
}
